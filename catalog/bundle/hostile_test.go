package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadBundleFileIsBounded: a bundle file that grew past MaxBundleSize after the bundle's size was checked is not
// read whole.
func TestReadBundleFileIsBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "grown.yaml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(50 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if data, err := readBundleFile(path); err == nil || len(data) != 0 || !strings.Contains(err.Error(), "more than 1048576 bytes") {
		t.Errorf("read %d bytes, err %v", len(data), err)
	}
}
