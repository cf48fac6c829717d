package upgrade

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// recordTakeover notes in st, once, which version ov took over from and when (status.takenOver): the version that
// was installed before, the one an automatic rollback goes back to.
func recordTakeover(st *operatorsv1alpha1.OperatorVersionStatus, olds []*operatorsv1alpha1.OperatorVersion, now time.Time) {
	prev := Previous(olds)
	if prev == nil || (st.TakenOver != nil && st.TakenOver.From == prev.Name) {
		return
	}
	st.TakenOver = &operatorsv1alpha1.Takeover{From: prev.Name, Version: prev.Spec.Version.String(), At: metav1.NewTime(now)}
}

// Previous is, of the versions an upgrade takes over from (nearest first), the one that ran before it: the newest
// that did not fail (in a chain v1 <- failed v2 <- v3, v1), else the nearest.
func Previous(olds []*operatorsv1alpha1.OperatorVersion) *operatorsv1alpha1.OperatorVersion {
	var prev *operatorsv1alpha1.OperatorVersion
	for _, o := range olds {
		if o.Status.Phase == operatorsv1alpha1.PhaseFailed {
			continue
		}
		if prev == nil || o.Spec.Version.GT(prev.Spec.Version.Version) {
			prev = o
		}
	}
	if prev == nil && len(olds) > 0 {
		prev = olds[0]
	}
	return prev
}
