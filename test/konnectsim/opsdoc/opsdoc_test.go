package opsdoc

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/almproject/alm/test/konnectsim/speccheck"
)

// TestOperations: docs/konnect-operations.md is what `make konnect-operations` writes today, every operation the
// operator calls is served by the simulator, and every endpoint the simulator serves is an operation of Kong's
// OpenAPI document.
func TestOperations(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	ops, err := Collect(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(ops.Called) < 10 {
		t.Errorf("only %d operations found in the operator's source: the SDK calls are no longer recognised", len(ops.Called))
	}
	for _, op := range ops.Unserved() {
		t.Errorf("the operator calls %s, which the simulator does not serve", op)
	}
	for _, e := range ops.NotInDocument {
		t.Errorf("the simulator serves %s, which is no operation of Kong's OpenAPI document", e)
	}
	// The document is checked with OpenAPI 3.0 semantics (speccheck's treatAsOpenAPI30), which do not check `const`:
	// no operation here may depend on it.
	spec, err := speccheck.Load()
	if err != nil {
		t.Fatal(err)
	}
	all := append([]speccheck.Operation(nil), ops.ServedOnly...)
	for _, c := range ops.Called {
		all = append(all, c.Operation)
	}
	for _, op := range all {
		if where := spec.ConstKeywords(op); len(where) > 0 {
			t.Errorf("%s uses const, which the check ignores: %v", op, where)
		}
	}
	committed, err := os.ReadFile(filepath.Join(root, DocPath))
	if err != nil {
		t.Fatal(err)
	}
	if string(committed) != ops.Render() {
		t.Errorf("%s is out of date: run make konnect-operations and commit it", DocPath)
	}
}
