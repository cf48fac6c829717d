package scale

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadAuditRefusesARotatedLog: requests in a log kube-apiserver moved aside would not be counted, so the count
// fails instead of coming out low.
func TestReadAuditRefusesARotatedLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readAudit(path, -1); err != nil {
		t.Fatalf("one log: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "audit-2026-11-27T05-38-39.305.log"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readAudit(path, -1); err == nil || !strings.Contains(err.Error(), "rotated") {
		t.Fatalf("a rotated log beside it: error %v, want one saying it rotated", err)
	}
}
