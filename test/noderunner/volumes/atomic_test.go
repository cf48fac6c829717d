package volumes

import (
	"os"
	"path/filepath"
	"testing"
)

// A volume is written as a kubelet lays it out, rewritten only when its content changes, and a rewrite switches
// every file at once through the "..data" symlink; entries that are gone are removed.
func TestWriteSwapsDataAtomically(t *testing.T) {
	dir := t.TempDir()
	read := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	changed, err := Write(dir, map[string][]byte{"tls.crt": []byte("cert 1"), "tls.key": []byte("key 1"), "extra": []byte("x")})
	if err != nil || !changed {
		t.Fatalf("first write: changed %t, %v", changed, err)
	}
	first, _ := os.Readlink(filepath.Join(dir, dataDir))
	if target, _ := os.Readlink(filepath.Join(dir, "tls.crt")); target != filepath.Join(dataDir, "tls.crt") {
		t.Errorf("tls.crt links to %q, want through %s", target, dataDir)
	}
	if changed, err := Write(dir, map[string][]byte{"tls.crt": []byte("cert 1"), "tls.key": []byte("key 1"), "extra": []byte("x")}); err != nil || changed {
		t.Fatalf("same payload: changed %t, %v; want left alone", changed, err)
	}
	if changed, err := Write(dir, map[string][]byte{"tls.crt": []byte("cert 2"), "tls.key": []byte("key 2")}); err != nil || !changed {
		t.Fatalf("new payload: changed %t, %v", changed, err)
	}
	if got := read("tls.crt") + "/" + read("tls.key"); got != "cert 2/key 2" {
		t.Errorf("after the rewrite: %s, want cert 2/key 2", got)
	}
	second, _ := os.Readlink(filepath.Join(dir, dataDir))
	if second == first {
		t.Errorf("%s still points to %s", dataDir, first)
	}
	if _, err := os.Stat(filepath.Join(dir, first)); !os.IsNotExist(err) {
		t.Errorf("the previous payload directory %s is still there: %v", first, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "extra")); !os.IsNotExist(err) {
		t.Errorf("extra, no longer in the payload, is still there: %v", err)
	}
}
