// Package pkgsize measures Go packages by their lines of non-test code (Conventions 16: a package is one concern,
// under 2,000 lines of non-test code).
package pkgsize

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Limit is the number of lines of non-test code a package must stay under.
const Limit = 2000

// Package is one directory of Go code and its size.
type Package struct {
	// Dir is the directory, relative to the module root, slash-separated.
	Dir string
	// Lines counts the lines of its non-test .go files (what `cat $(ls *.go | grep -v _test) | wc -l` counts),
	// leaving out generated files: a package's size is what people write and read.
	Lines int
}

// Measure walks the module rooted at root and returns every directory that holds non-test .go files, with its
// line count, sorted by directory. It skips what the go command skips: testdata, vendor, and directories whose
// name starts with "." or "_" (and the root's bin/, which holds built tools), and files marked generated as Go
// marks them (a line "// Code generated ... DO NOT EDIT." before the package clause, e.g. zz_generated.deepcopy.go).
func Measure(root string) ([]Package, error) {
	sizes := map[string]int{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
				filepath.Dir(path) == root && name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if generated(data) {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		sizes[filepath.ToSlash(rel)] += lines(data)
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]Package, 0, len(sizes))
	for dir, n := range sizes {
		out = append(out, Package{Dir: dir, Lines: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dir < out[j].Dir })
	return out, nil
}

// generatedMarker is Go's convention for generated files (https://go.dev/s/generatedcode).
var generatedMarker = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

// generated says whether a Go file is marked generated before its package clause.
func generated(data []byte) bool {
	header := data
	if i := bytes.Index(data, []byte("\npackage ")); i >= 0 {
		header = data[:i]
	} else if bytes.HasPrefix(data, []byte("package ")) {
		return false
	}
	return generatedMarker.Match(header)
}

// lines counts lines as wc -l does: newline characters.
func lines(data []byte) int { return bytes.Count(data, []byte{'\n'}) }
