package konnect

import (
	"os/exec"
	"strings"
	"testing"
)

// TestKonnectOperatorImportsNothingOfALM: the Konnect operator is a product ALM installs, not part of ALM; nothing it
// is built from may import ALM's loops or their internals (what both use lives in the module's internal/).
func TestKonnectOperatorImportsNothingOfALM(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/almproject/alm/cmd/konnect-operator").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var alm []string
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/almproject/alm/controllers/") && !strings.HasPrefix(pkg, "github.com/almproject/alm/controllers/konnect") {
			alm = append(alm, pkg)
		}
	}
	if len(alm) > 0 {
		t.Errorf("the Konnect operator imports ALM's controllers: %v", alm)
	}
	if !strings.Contains(string(out), "github.com/almproject/alm/controllers/konnect/entity") {
		t.Fatalf("go list -deps did not list the operator's own packages:\n%s", out)
	}
}
