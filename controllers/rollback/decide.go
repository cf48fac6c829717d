package rollback

import (
	"fmt"
	"time"

	"github.com/blang/semver/v4"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/internal/versions"
)

// Decision is what the loop does for one AppType.
type Decision struct {
	// RollBack: install the bundle Target (version TargetVersion) in place of From, taking its objects over.
	RollBack bool
	// Automatic: an automatic rollback (the version rolled back from is not offered again); false: a downgrade
	// the spec asks for.
	Automatic bool
	From      *operatorsv1alpha1.OperatorVersion
	// Target is the bundle name to install again (automatic: the version From took over from); empty for a
	// downgrade, which names TargetVersion only.
	Target        string
	TargetVersion semver.Version
	// Reason says why, for the condition, the status and the rollback version's spec.rollbackFrom.reason.
	Reason string
	// Refused says why a downgrade the spec asks for cannot be done (no such version in the catalog).
	Refused string
	// RequeueAfter asks to look again then (the version that took over is unavailable, not yet for rollbackAfter).
	RequeueAfter time.Duration
}

// unavailable are the reasons of a version's Ready=False that say its Deployments are not available: what an
// automatic rollback reacts to. A version that waits for a permission, a bundle or a requirement is not judged.
var unavailable = map[string]bool{
	operatorsv1alpha1.ReasonDeploymentNotReady:       true,
	operatorsv1alpha1.ReasonInstallTimeout:           true,
	operatorsv1alpha1.ReasonProgressDeadlineExceeded: true,
	operatorsv1alpha1.ReasonImagePullFailed:          true,
	operatorsv1alpha1.ReasonCrashLoopBackOff:         true,
	operatorsv1alpha1.ReasonUnschedulable:            true,
	operatorsv1alpha1.ReasonPodCreationFailed:        true,
}

// After is at's spec.rollbackAfter, or its default; Window its spec.rollbackWindow, or its default.
func After(at *operatorsv1alpha1.AppType) time.Duration {
	if d := at.Spec.RollbackAfter; d != nil && d.Duration > 0 {
		return d.Duration
	}
	return operatorsv1alpha1.DefaultRollbackAfter
}

// Window is at's spec.rollbackWindow, or its default.
func Window(at *operatorsv1alpha1.AppType) time.Duration {
	if d := at.Spec.RollbackWindow; d != nil && d.Duration > 0 {
		return d.Duration
	}
	return operatorsv1alpha1.DefaultRollbackWindow
}

// Automatic is the automatic rollback decision. It rolls back when at asks for it (spec.rollback: Automatic) and
// the installed version took over in an upgrade (status.takenOver; the versions it replaced are collected), is
// not itself a rollback, and has not been available since a moment within the window after it took over, for
// rollbackAfter or longer. It waits (RequeueAfter) while the version is unavailable for less than that.
func Automatic(at *operatorsv1alpha1.AppType, installed *operatorsv1alpha1.OperatorVersion, all []operatorsv1alpha1.OperatorVersion, now time.Time) Decision {
	if at.Spec.Rollback != operatorsv1alpha1.RollbackAutomatic || installed == nil || installed.Spec.RollbackFrom != nil ||
		!installed.DeletionTimestamp.IsZero() {
		return Decision{}
	}
	took := installed.Status.TakenOver
	if took == nil || len(versions.Chain(installed, all)) > 0 || rolledBack(at, took.From) {
		return Decision{} // not an upgrade, still taking over, or the previous version was itself rolled back from
	}
	ready := apimeta.FindStatusCondition(installed.Status.Conditions, operatorsv1alpha1.ConditionReady)
	if ready == nil || ready.Status == metav1.ConditionTrue || !unavailable[installed.Status.Reason] {
		return Decision{}
	}
	since := ready.LastTransitionTime.Time
	if since.Before(took.At.Time) {
		since = took.At.Time
	}
	if since.Sub(took.At.Time) > Window(at) {
		return Decision{} // it stopped being available after the window: fail forward
	}
	after := After(at)
	if wait := since.Add(after).Sub(now); wait > 0 {
		return Decision{RequeueAfter: wait}
	}
	v, err := semver.ParseTolerant(took.Version)
	if err != nil {
		return Decision{}
	}
	return Decision{RollBack: true, Automatic: true, From: installed, Target: took.From, TargetVersion: v,
		Reason: fmt.Sprintf("%s was not available for %s after taking over: %s", installed.Name, after, installed.Status.Message)}
}

// rolledBack says whether at rolled back from the version name (status.rolledBack).
func rolledBack(at *operatorsv1alpha1.AppType, name string) bool {
	for _, rb := range at.Status.RolledBack {
		if rb.Name == name {
			return true
		}
	}
	return false
}

// AsksOlder says whether at's spec asks for a version older than the installed one: spec.approvedVersion (approval:
// Manual) names one, or spec.versionRange excludes the installed version (and may include an older one).
func AsksOlder(at *operatorsv1alpha1.AppType, installed *operatorsv1alpha1.OperatorVersion) bool {
	if installed == nil {
		return false
	}
	current := installed.Spec.Version.Version
	if at.Spec.Approval == operatorsv1alpha1.ApprovalManual && at.Spec.ApprovedVersion != "" {
		v, err := semver.ParseTolerant(at.Spec.ApprovedVersion)
		return err == nil && v.LT(current)
	}
	if at.Spec.VersionRange == "" {
		return false
	}
	rng, err := semver.ParseRange(at.Spec.VersionRange)
	return err == nil && !rng(current)
}

// Downgrade is the manual rollback decision: the spec asks for a version older than the installed one, by
// spec.approvedVersion (approval: Manual) or by a spec.versionRange that excludes the installed version (the
// highest older version of the channel in the range, from available). Nothing happens while an upgrade or a
// rollback is under way (the installed version still replaces others).
func Downgrade(at *operatorsv1alpha1.AppType, installed *operatorsv1alpha1.OperatorVersion, all []operatorsv1alpha1.OperatorVersion, available []semver.Version) Decision {
	if installed == nil || !installed.DeletionTimestamp.IsZero() || len(versions.Chain(installed, all)) > 0 {
		return Decision{}
	}
	current := installed.Spec.Version.Version
	if at.Spec.Approval == operatorsv1alpha1.ApprovalManual && at.Spec.ApprovedVersion != "" {
		v, err := semver.ParseTolerant(at.Spec.ApprovedVersion)
		if err != nil || !v.LT(current) {
			return Decision{}
		}
		d := Decision{RollBack: true, From: installed, TargetVersion: v,
			Reason: fmt.Sprintf("spec.approvedVersion %s is older than the installed %s", at.Spec.ApprovedVersion, installed.Name)}
		for _, a := range available {
			if a.EQ(v) {
				return d
			}
		}
		return Decision{Refused: fmt.Sprintf("downgrading %s to %s: no bundle of version %s in the AppType's channel and catalogs",
			installed.Name, v, v)}
	}
	if at.Spec.VersionRange == "" {
		return Decision{}
	}
	rng, err := semver.ParseRange(at.Spec.VersionRange)
	if err != nil || rng(current) {
		return Decision{}
	}
	var best *semver.Version
	for i, a := range available {
		if rng(a) && a.LT(current) && (best == nil || a.GT(*best)) {
			best = &available[i]
		}
	}
	if best == nil {
		return Decision{}
	}
	return Decision{RollBack: true, From: installed, TargetVersion: *best,
		Reason: fmt.Sprintf("spec.versionRange %s excludes the installed %s", at.Spec.VersionRange, installed.Name)}
}
