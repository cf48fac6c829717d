// Command konnect-operations writes docs/konnect-operations.md: the operations of Kong's OpenAPI document for
// Konnect that the Konnect operator calls and the simulator serves (package opsdoc). Run by `make konnect-operations`.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/almproject/alm/test/konnectsim/opsdoc"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "konnect-operations:", err)
		os.Exit(1)
	}
}

func run() error {
	root, err := opsdoc.RepoRoot()
	if err != nil {
		return err
	}
	ops, err := opsdoc.Collect(root)
	if err != nil {
		return err
	}
	path := filepath.Join(root, opsdoc.DocPath)
	if err := os.WriteFile(path, []byte(ops.Render()), 0o644); err != nil {
		return err
	}
	fmt.Printf("%s: %d operations called by the operator (%d not served by the simulator), %d more served\n",
		opsdoc.DocPath, len(ops.Called), len(ops.Unserved()), len(ops.ServedOnly))
	return nil
}
