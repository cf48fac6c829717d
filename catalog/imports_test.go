package catalog

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoControllerRuntime keeps catalog a pure library: none of its files imports controller-runtime.
func TestNoControllerRuntime(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			if strings.Contains(imp.Path.Value, "sigs.k8s.io/controller-runtime") {
				t.Errorf("%s imports %s", f, imp.Path.Value)
			}
		}
	}
}
