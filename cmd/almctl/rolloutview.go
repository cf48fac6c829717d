package main

import (
	"fmt"
	"io"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/duration"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// writeRollouts writes one line per rollout (status.rollouts of the CatalogSources read) of the packages of the
// AppTypes shown: which version goes out in which wave, how far it got, and a halt with the install that failed.
func writeRollouts(w io.Writer, st *clusterState) {
	pkgs := map[string]bool{}
	for _, at := range st.appTypes {
		pkgs[at.Spec.Package] = true
	}
	first := true
	for _, key := range st.catalogKeys() {
		for _, ro := range st.catalogs[key].Status.Rollouts {
			if !pkgs[ro.Package] {
				continue
			}
			if first {
				fmt.Fprintln(w, "\nRollouts (CatalogSource spec.rollout):")
				first = false
			}
			fmt.Fprintf(w, "  %s\n", rolloutLine(key, &ro, st))
		}
	}
}

// rolloutLine is one rollout: "pkg 2.0.0 from ns/catalog: Halted in wave 1 of 3, 0/20 upgraded, ...; halted: ...".
func rolloutLine(key string, ro *almv1alpha1.RolloutStatus, st *clusterState) string {
	line := fmt.Sprintf("%s %s from %s: %s in wave %d of %d, %d/%d upgraded, %d upgrading, %d held for approval, %d failed, %d waiting for their wave",
		ro.Package, ro.Version, key, ro.Phase, ro.Wave, ro.Waves, ro.Upgraded, ro.Installs, ro.Upgrading, ro.Held, ro.Failed, ro.Pending)
	if ro.SoakUntil != nil && ro.Phase == almv1alpha1.RolloutSoaking {
		line += "; next wave in " + duration.HumanDuration(ro.SoakUntil.Sub(st.now))
	}
	if h := ro.Halt; h != nil && ro.Phase == almv1alpha1.RolloutHalted {
		line += fmt.Sprintf("; halted: install %s failed: %s: %s (publish a newer version to resume)", h.Install, h.Reason, oneLine(h.Message, 300))
	}
	return line
}

// haltOf is the AppType's RolloutHalted condition as "RolloutHalted: message", "" when it has none.
func haltOf(at *almv1alpha1.AppType) string {
	if c := apimeta.FindStatusCondition(at.Status.Conditions, almv1alpha1.ConditionRolloutHalted); c != nil {
		return almv1alpha1.ConditionRolloutHalted + ": " + c.Message
	}
	return ""
}
