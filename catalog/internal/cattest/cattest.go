// Package cattest holds the helpers the tests of the catalog packages share: copying testdata, editing files, and
// File-Based Catalog documents.
package cattest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CopyDir copies a testdata directory into a temporary one, so cases can be changed (e.g. made too large).
func CopyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	CopyTree(t, src, dst)
	return dst
}

// CopyTree copies the files under from to to.
func CopyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		target := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// WriteFile writes a file, creating its directory.
func WriteFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ReplaceIn replaces old (which must be there) by replacement in a file, once.
func ReplaceIn(t *testing.T, path, old, replacement string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), old) {
		t.Fatalf("%s: %v (or no %q in it)", path, err, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), old, replacement, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ProblemLines is one indented line per problem (a bundle.Problem).
func ProblemLines[P fmt.Stringer](ps []P) string {
	var sb strings.Builder
	for _, p := range ps {
		sb.WriteString("  " + p.String() + "\n")
	}
	return sb.String()
}

// BundleDoc is an olm.bundle document providing one kind.
func BundleDoc(pkg, version string) string {
	return fmt.Sprintf(`{"schema":"olm.bundle","name":"%[1]s.v%[2]s","package":"%[1]s","image":"example.com/%[1]s:%[2]s",`+
		`"properties":[{"type":"olm.package","value":{"packageName":"%[1]s","version":"%[2]s"}},`+
		`{"type":"olm.gvk","value":{"group":"%[1]s.example.com","version":"v1","kind":"Thing"}}]}`+"\n", pkg, version)
}
