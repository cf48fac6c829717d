package konnect

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/almproject/alm/test/konnectsim/opsdoc"
	"github.com/almproject/alm/test/konnectsim/speccheck"
)

// checkSpecCoverage runs after the package's tests: it prints what the simulators' check against Kong's OpenAPI
// document did, and after a full run (no -run, -skip or -short) fails unless every operation the operator calls
// (docs/konnect-operations.md) was answered successfully, request and answer both checked, at least once.
func checkSpecCoverage(code int) int {
	sum := speccheck.Stats()
	fmt.Fprintf(os.Stderr, "speccheck: %d exchanges checked against the OpenAPI document (%d operations), document loaded in %v\n",
		sum.Checked, len(sum.Operations), sum.LoadTime.Round(1e6))
	if code != 0 || !fullRun() {
		return code
	}
	root, err := opsdoc.RepoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ops, err := opsdoc.Collect(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	missing := ops.Unexercised()
	for _, op := range missing {
		fmt.Fprintf(os.Stderr, "FAIL: the operator calls %s, but no test of this package had it answered successfully by the simulator\n", op)
	}
	if len(missing) > 0 {
		return 1
	}
	fmt.Fprintf(os.Stderr, "speccheck: each of the %d operations the operator calls was exercised and checked\n", len(ops.Called))
	return code
}

// fullRun says whether every test of the package ran.
func fullRun() bool {
	for _, name := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	return !testing.Short()
}
