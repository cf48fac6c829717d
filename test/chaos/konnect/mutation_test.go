package konnect

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/almproject/alm/test/chaos"
)

// TestKonnectChaosCatchesDuplicates: the duplicate check of TestKonnectChaos fails when what it guards is broken.
// The operator is built with the mutation chaos_skip_lookup (controllers/konnect/entity/lookup_mutation.go: no
// look-up by k8s-uid tag before a create) and runs the create phase of seed 13, kills at held creates included;
// the check must then find duplicates by k8s-uid.
func TestKonnectChaosCatchesDuplicates(t *testing.T) {
	chaos.Require(t)
	const seed = 13
	bin := buildOperator(t, "chaos_skip_lookup")
	s := newScenario(t, bin, fmt.Sprintf("konnect-chaos-mutation-%d", seed), seed)
	start := time.Now()
	holds := s.holdCreates()
	s.createAll()
	took := s.phase("create", start, s.programmed, holds)
	problems := s.duplicates()
	row := chaos.Row{
		Scenario: fmt.Sprintf("Konnect operator, mutation: no look-up by k8s-uid tag before a create (build tag chaos_skip_lookup); "+
			"the create phase of seed %d", seed),
		Runs:    1,
		Slowest: took,
		Checks:  "counted converged when the duplicate check of the row above fails, as it must with the look-up gone",
	}
	if len(problems) == 0 {
		t.Errorf("with the look-up disabled the duplicate check found nothing: it cannot fail")
	} else {
		row.Converged = 1
	}
	dups := 0
	for _, p := range problems {
		if strings.Contains(p, "carry k8s-uid") {
			dups++
		}
	}
	for _, p := range problems[:min(5, len(problems))] {
		t.Logf("the check failed as it must: %s", p)
	}
	row.Notes = fmt.Sprintf("the check failed with %d problems, %d of them k8s-uids carried by more than one entity, e.g. %q; kills at %s",
		len(problems), dups, first(problems), strings.Join(s.killNotes, " and "))
	chaos.Record(t, row)
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
