package metrics

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// Loops whose phase changes count as installs or upgrades.
const (
	LoopInstall = "install"
	LoopUpgrade = "upgrade"
)

// PhaseChanged records that loop wrote ov's status with phase to where it had phase from: how long the change took
// (since the previous change this process saw, else since ov was created), and an install or upgrade that reached
// Succeeded or Failed. Call it after the write succeeded; a write that kept the phase records nothing.
func PhaseChanged(ov *operatorsv1alpha1.OperatorVersion, from, to operatorsv1alpha1.OperatorVersionPhase, loop string) {
	if from == to {
		return
	}
	objects.transitioned(ov, to, time.Now())
	result := ""
	switch to {
	case operatorsv1alpha1.PhaseSucceeded:
		result = ResultSucceeded
	case operatorsv1alpha1.PhaseFailed:
		result = ResultFailed
	default:
		return
	}
	switch loop {
	case LoopInstall:
		installs.WithLabelValues(ov.Spec.PackageName, result).Inc()
	case LoopUpgrade:
		upgrades.WithLabelValues(ov.Spec.PackageName, result).Inc()
	}
}

// HandedOver records that old's objects were handed over to the version that replaces it and old went Replacing.
func HandedOver(old *operatorsv1alpha1.OperatorVersion, from operatorsv1alpha1.OperatorVersionPhase) {
	adoptions.WithLabelValues(old.Spec.PackageName).Inc()
	PhaseChanged(old, from, operatorsv1alpha1.PhaseReplacing, "")
}

// ResolutionChanged records an AppType's Resolved condition going from before (nil: none) to after: a failure that
// starts, or whose reason changes, counts once.
func ResolutionChanged(before, after *metav1.Condition) {
	if after == nil || after.Status != metav1.ConditionFalse {
		return
	}
	if before != nil && before.Status == metav1.ConditionFalse && before.Reason == after.Reason {
		return
	}
	resolutionFailures.WithLabelValues(after.Reason).Inc()
}
