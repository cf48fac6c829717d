package bundle

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/almproject/alm/catalog/internal/cattest"
)

// TestHandoffAnnotation: operators.alm.dev/handoff gives the OperatorVersion spec.handoff and its operator's
// ServiceAccount a rule for this OperatorVersion and its status only; a value that is neither "true" nor a positive
// duration excludes the bundle with invalid-handoff.
func TestHandoffAnnotation(t *testing.T) {
	load := func(t *testing.T, value string) (*Bundle, []Problem) {
		t.Helper()
		dir := cattest.CopyDir(t, "../testdata/bad/install-strategy/good/1.0.0")
		csv := filepath.Join(dir, "manifests", "good.v1.0.0.clusterserviceversion.yaml")
		cattest.ReplaceIn(t, csv, "  annotations:\n", "  annotations:\n    operators.alm.dev/handoff: \""+value+"\"\n")
		return Load(dir)
	}
	for value, want := range map[string]time.Duration{"true": DefaultHandoffTimeout, "90s": 90 * time.Second} {
		b, problems := load(t, value)
		if b == nil {
			t.Fatalf("%s: bundle excluded: %v", value, problems)
		}
		ov, err := b.OperatorVersion("ns")
		if err != nil {
			t.Fatal(err)
		}
		if ov.Spec.Handoff == nil || ov.Spec.Handoff.Timeout.Duration != want {
			t.Errorf("%s: spec.handoff %+v, want timeout %s", value, ov.Spec.Handoff, want)
		}
		granted := false
		for _, p := range ov.Spec.Install.StrategySpec.Permissions {
			for _, r := range p.Rules {
				if slices.Equal(r.Resources, []string{"operatorversions", "operatorversions/status"}) && slices.Equal(r.ResourceNames, []string{ov.Name}) {
					granted = true
				}
			}
		}
		if !granted {
			t.Errorf("%s: no rule for OperatorVersion %s and its status in %+v", value, ov.Name, ov.Spec.Install.StrategySpec.Permissions)
		}
	}
	for _, bad := range []string{"soon", "-1m", "0s"} {
		if b, problems := load(t, bad); b != nil || !strings.Contains(cattest.ProblemLines(problems), RuleInvalidHandoff) {
			t.Errorf("%q: bundle %v, problems %v; want it excluded with %s", bad, b != nil, problems, RuleInvalidHandoff)
		}
	}
}
