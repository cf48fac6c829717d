package waves

import (
	"github.com/blang/semver/v4"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/index"
	"github.com/almproject/alm/controllers/internal/versions"
	"github.com/almproject/alm/controllers/upgradetrigger"
)

// Target is the version a rollout brings installs to.
type Target struct {
	Bundle  string
	Version semver.Version
}

// unavailable are the reasons of a version's Ready=False that say its Deployments are not available (as the
// Rollback loop judges them): after it took over, a version that shows one failed the soak.
var unavailable = map[string]bool{
	operatorsv1alpha1.ReasonDeploymentNotReady:       true,
	operatorsv1alpha1.ReasonInstallTimeout:           true,
	operatorsv1alpha1.ReasonProgressDeadlineExceeded: true,
	operatorsv1alpha1.ReasonImagePullFailed:          true,
	operatorsv1alpha1.ReasonCrashLoopBackOff:         true,
	operatorsv1alpha1.ReasonUnschedulable:            true,
	operatorsv1alpha1.ReasonPodCreationFailed:        true,
}

// Classify says which rollout of catalog (its index name, namespace/name) the install at belongs to, and its state
// in it, from its OperatorVersions (all) and the version its resolution offers (chosen; nil for none). ok is false
// when it belongs to none: nothing installed or its first install under way, a downgrade the user asked for, or a
// version that comes from another catalog.
//
//   - A version newer than the one it runs (or was on its way to) is offered from catalog: that version's
//     rollout, Pending (Held when approval: Manual does not name it).
//   - It was rolled back automatically from a version: that version's rollout, Failed.
//   - It runs (or is on its way to) a version a rollout created: that rollout, Failed when the version failed or
//     stopped being available after it took over, Upgraded once it Succeeded and took over, Upgrading until then.
//   - It runs a version from catalog that no rollout created (installed at that version): Upgraded.
func Classify(at *operatorsv1alpha1.AppType, all []operatorsv1alpha1.OperatorVersion, chosen *index.Candidate, catalog string) (Target, Install, bool) {
	in := Install{Key: types.NamespacedName{Namespace: at.Namespace, Name: at.Name}}
	cur := versions.Installed(all)
	// A version not written yet is a first install, unless a rollout created it or it rolls an install back: the
	// rollback of a failed version must count as that version's failure from its first moment, or a reconcile that
	// did not see the failure itself would take the install for none of the rollout's and start the next wave.
	if cur == nil || (cur.Status.Phase == "" && cur.Annotations[operatorsv1alpha1.AnnotationRolloutTarget] == "" && cur.Spec.RollbackFrom == nil) {
		return Target{}, in, false
	}
	aim, created := Target{Bundle: cur.Name, Version: cur.Spec.Version.Version}, false
	if name := cur.Annotations[operatorsv1alpha1.AnnotationRolloutTarget]; name != "" {
		aim, created = Target{Bundle: name, Version: cur.Spec.Version.Version}, true
		if v, err := semver.ParseTolerant(cur.Annotations[operatorsv1alpha1.AnnotationRolloutVersion]); err == nil {
			aim.Version = v
		}
	}
	back := cur.Spec.RollbackFrom
	if back != nil {
		v, err := semver.ParseTolerant(back.Version)
		if !back.Automatic || err != nil {
			return Target{}, in, false // a downgrade the spec asks for is the user's, not a rollout's
		}
		aim = Target{Bundle: back.Name, Version: v}
	}
	if chosen != nil && chosen.Name != cur.Name && chosen.Version.GT(aim.Version) {
		if chosen.Catalog != catalog {
			return Target{}, in, false
		}
		in.State = Pending
		if !upgradetrigger.Approved(at, chosen.Version.String()) {
			in.State = Held
		}
		return Target{Bundle: chosen.Name, Version: chosen.Version}, in, true
	}
	switch {
	case back != nil:
		in.State, in.Reason, in.Message = Failed, operatorsv1alpha1.ReasonAutomaticRollback, "rolled back: "+back.Reason
	case !created:
		if src := cur.Spec.Source; src == nil || src.Namespace+"/"+src.Name != catalog || !settled(cur, all) {
			return Target{}, in, false
		}
		in.State, in.DoneAt = Upgraded, readySince(cur).Time
	default:
		in = state(in, cur, all, aim)
	}
	return aim, in, true
}

// state is the state of an install whose installed version cur a rollout to aim created.
func state(in Install, cur *operatorsv1alpha1.OperatorVersion, all []operatorsv1alpha1.OperatorVersion, aim Target) Install {
	ready := apimeta.FindStatusCondition(cur.Status.Conditions, operatorsv1alpha1.ConditionReady)
	switch {
	case cur.Status.Phase == operatorsv1alpha1.PhaseFailed:
		in.State, in.Reason, in.Message = Failed, cur.Status.Reason, cur.Name+": "+cur.Status.Message
	case cur.Status.TakenOver != nil && ready != nil && ready.Status == metav1.ConditionFalse && unavailable[cur.Status.Reason]:
		in.State, in.Reason = Failed, cur.Status.Reason
		in.Message = cur.Name + " stopped being available after it took over: " + cur.Status.Message
	case len(versions.Chain(cur, all)) > 0 || cur.Status.Phase != operatorsv1alpha1.PhaseSucceeded:
		in.State = Upgrading
	case cur.Name != aim.Bundle:
		in.State, in.Next = Upgrading, true // a hop on the way took over: the next one is due
	default:
		in.State, in.DoneAt = Upgraded, readySince(cur).Time
		if cur.Status.TakenOver != nil {
			in.DoneAt = cur.Status.TakenOver.At.Time
		}
	}
	return in
}

// settled says whether cur runs alone: Succeeded, and nothing older left to take over from.
func settled(cur *operatorsv1alpha1.OperatorVersion, all []operatorsv1alpha1.OperatorVersion) bool {
	return cur.Status.Phase == operatorsv1alpha1.PhaseSucceeded && len(versions.Chain(cur, all)) == 0
}

func readySince(ov *operatorsv1alpha1.OperatorVersion) (t metav1.Time) {
	if c := apimeta.FindStatusCondition(ov.Status.Conditions, operatorsv1alpha1.ConditionReady); c != nil {
		return c.LastTransitionTime
	}
	return ov.CreationTimestamp
}
