package installer

import (
	"fmt"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// Polling intervals, one per reason to look again although nothing may change.
const (
	// requeueRequirements: a required CRD is missing or not established yet (the timeout is checked each time).
	requeueRequirements = 30 * time.Second
	// requeueRollout: a Deployment is rolling out, or its rollout failed and may still recover or time out.
	requeueRollout = Recheck
	// requeueBundle: the bundle image cannot be pulled yet (registry, CatalogSource or pull Secret); nothing watched
	// says when that clears.
	requeueBundle = 30 * time.Second
	// requeueRefused: the identity the version installs as lacks a permission; nothing watched says when it is
	// granted (RBAC objects are not watched).
	requeueRefused = 30 * time.Second
)

// Recheck is how soon a version that waits on the cluster (Installing: its Deployments; its own last status write
// not in the cache yet; Replacing: its objects to be handed over) is looked at again from the cache, whatever the
// watches deliver: a watch event that is lost or late (an API server restart) delays it by at most this. 10s: a
// tenth of the time an install is given to roll out by default (5m) is not noticeable to a user, and it costs no
// request — a recheck reads the cache, which resumes within seconds of an API server outage (package outage), and
// writes only when something changed.
const Recheck = 10 * time.Second

// terminal reasons: retrying cannot help, a newer version has to fix the bundle.
var terminal = map[string]bool{
	operatorsv1alpha1.ReasonInvalidStrategy: true,
	operatorsv1alpha1.ReasonCRDUnsafe:       true,
	ReasonConflict:                          true,
	// The operator did not take over from the version it replaces (the Upgrade loop's handoff).
	operatorsv1alpha1.ReasonHandoffFailed: true, operatorsv1alpha1.ReasonHandoffTimedOut: true,
	// The bundle content is not what the version was resolved to, or not installable: see bundlecontent.
	operatorsv1alpha1.ReasonDigestMismatch: true,
	operatorsv1alpha1.ReasonNoBundleDigest: true,
	operatorsv1alpha1.ReasonInvalidBundle:  true,
	operatorsv1alpha1.ReasonImageRefused:   true,
	operatorsv1alpha1.ReasonImageTooLarge:  true,
}

// facts is what Step read about one OperatorVersion: the input of decide.
type facts struct {
	// status is the OperatorVersion's status before this step.
	status *operatorsv1alpha1.OperatorVersionStatus
	// now is the clock, age is how long ago the OperatorVersion was created, timeout bounds Pending and Installing.
	now     time.Time
	age     time.Duration
	timeout time.Duration
	// bundle is the verification of the bundle content against spec.bundle.digest (a version without spec.bundle is
	// not verified: bundlecontent.Unrecorded); nil only in unit tests of the decisions that follow it.
	bundle *bundleCheck
	// invalid says why the install strategy is invalid; "" when the plan was built.
	invalid string
	// missing are the required CRDs that do not exist or are not established.
	missing []string
	// dependencies are the required packages not met yet, each with its state; cycle is the chain of packages when
	// they require this version's own package back.
	dependencies []string
	cycle        string
	// refused says why the identity the version installs as may not install its plan (access.Checker); nothing was
	// applied. "" when it may, or was not asked.
	refused string
	// applied is the outcome of applying the plan; nil while it has not been applied in this step.
	applied *applied
}

// bundleCheck is the outcome of verifying the bundle content (bundlecontent.Result).
type bundleCheck struct {
	// verified says what was verified, naming the digest; "" when it was not.
	verified string
	// reason and message say why it was not; permanent: retrying cannot help.
	reason, message string
	permanent       bool
}

// applied is the outcome of applying the plan and reading its Deployments.
type applied struct {
	// conflict says which object belongs to someone else; unsafeCRD why an owned CRD update is refused.
	conflict, unsafeCRD string
	// objects is how many objects were applied; skipped the kinds whose API is not served.
	objects int
	skipped []string
	// notReady and failed describe the Deployments that are not rolled out, and those whose rollout failed
	// (progress deadline exceeded), with the pods' reason.
	notReady, failed []string
	// problem is the reason the cluster reports for the first Deployment whose pods do not become available
	// (rollout.Diagnose: an image that cannot be pulled, a crash, unschedulable, pods not created); "" when none.
	problem string
}

// verdict is what decide says the step does.
type verdict struct {
	// conditions are set in this order, before the phase.
	conditions []metav1.Condition
	// phase, reason and message are the new phase; phase "" leaves the status as it is.
	phase           operatorsv1alpha1.OperatorVersionPhase
	reason, message string
	// requeueAfter asks to look again even if nothing changes.
	requeueAfter time.Duration
	// apply: the requirements are met; apply the plan, read the Deployments, and decide again with facts.applied.
	apply bool
}

// terminal says whether the verdict fails the version for a reason that retrying cannot fix.
func (v verdict) terminal() bool {
	return v.phase == operatorsv1alpha1.PhaseFailed && terminal[v.reason]
}

// decide is the install decision: from what Step read, the phase to move to (at most one phase per step, where
// "requirements met, apply" and the outcome of applying count as one), the conditions to set and when to look
// again. It is pure: no API calls, no clock.
func decide(f facts) verdict {
	phase := f.status.Phase
	switch {
	case phase == operatorsv1alpha1.PhaseFailed && terminal[f.status.Reason]:
		return verdict{}
	case f.bundle != nil && f.bundle.verified == "":
		return decideBundle(f, phase)
	}
	v := decideContent(f, phase)
	if f.bundle != nil {
		verified := condition(operatorsv1alpha1.ConditionBundleVerified, metav1.ConditionTrue, operatorsv1alpha1.ReasonBundleVerified, f.bundle.verified)
		v.conditions = append([]metav1.Condition{verified}, v.conditions...)
	}
	return v
}

// decideBundle is the decision when the bundle content is not verified; nothing is applied. Content that is not
// what the version was resolved to fails it for good. A bundle image that cannot be pulled yet keeps a new version
// Pending, and fails it once the install timeout passed, like a missing required CRD (a failure that still retries:
// a later pull installs it). A version that was installed already keeps its phase: its objects stay as they are.
func decideBundle(f facts, phase operatorsv1alpha1.OperatorVersionPhase) verdict {
	b := f.bundle
	notVerified := condition(operatorsv1alpha1.ConditionBundleVerified, metav1.ConditionFalse, b.reason, b.message)
	if b.permanent {
		v := failed(b.reason, b.message)
		v.conditions = []metav1.Condition{notVerified}
		return v
	}
	v := verdict{conditions: []metav1.Condition{notVerified}, requeueAfter: requeueBundle}
	switch {
	case phase == operatorsv1alpha1.PhaseInstalling || phase == operatorsv1alpha1.PhaseSucceeded:
		return v
	case f.age > f.timeout:
		v.phase = operatorsv1alpha1.PhaseFailed
	default:
		v.phase = operatorsv1alpha1.PhasePending
	}
	v.reason, v.message = operatorsv1alpha1.ReasonBundleUnavailable, b.message
	return v
}

// decideContent is the decision once the content is verified (or has no digest to verify).
func decideContent(f facts, phase operatorsv1alpha1.OperatorVersionPhase) verdict {
	switch {
	case f.invalid != "":
		return failed(operatorsv1alpha1.ReasonInvalidStrategy, f.invalid)
	case f.cycle != "":
		msg := "dependency cycle: " + f.cycle + "; waiting cannot resolve it: a version of one of these packages must drop the " +
			"dependency (unmet: " + strings.Join(f.dependencies, "; ") + ")"
		return verdict{conditions: []metav1.Condition{condition(operatorsv1alpha1.ConditionRequirementsMet, metav1.ConditionFalse,
			operatorsv1alpha1.ReasonDependencyCycle, msg)}, reason: operatorsv1alpha1.ReasonDependencyCycle, message: msg,
			phase: operatorsv1alpha1.PhaseFailed, requeueAfter: requeueRequirements}
	case len(f.missing) > 0 || len(f.dependencies) > 0:
		var parts []string
		if len(f.missing) > 0 {
			parts = append(parts, "waiting for required CRDs: "+strings.Join(f.missing, ", "))
		}
		if len(f.dependencies) > 0 {
			parts = append(parts, "waiting for dependencies: "+strings.Join(f.dependencies, "; "))
		}
		msg := strings.Join(parts, "; ")
		v := verdict{conditions: []metav1.Condition{condition(operatorsv1alpha1.ConditionRequirementsMet, metav1.ConditionFalse,
			operatorsv1alpha1.ReasonRequirementMissing, msg)}, reason: operatorsv1alpha1.ReasonRequirementMissing, message: msg,
			phase: operatorsv1alpha1.PhasePending, requeueAfter: requeueRequirements}
		if f.age > f.timeout {
			v.phase = operatorsv1alpha1.PhaseFailed
		}
		return v
	}
	met := condition(operatorsv1alpha1.ConditionRequirementsMet, metav1.ConditionTrue, operatorsv1alpha1.ReasonRequirementsMet,
		"every required CRD is established and every dependency has Succeeded")
	if f.refused != "" {
		return decideRefused(f, phase, met)
	}
	if f.applied == nil {
		// Requirements met: apply in this very step. A version whose requirements were met goes from Pending (or
		// nothing) straight to Installing or Succeeded, with one status write instead of one through InstallReady.
		return verdict{apply: true}
	}
	v := decideRollout(f, phase)
	v.conditions = append([]metav1.Condition{met}, v.conditions...)
	if apimeta.FindStatusCondition(f.status.Conditions, operatorsv1alpha1.ConditionAuthorized) != nil {
		v.conditions = append(v.conditions, condition(operatorsv1alpha1.ConditionAuthorized, metav1.ConditionTrue,
			operatorsv1alpha1.ReasonAuthorized, "the identity this version installs as may create and grant everything it installs"))
	}
	return v
}

// decideRefused is the decision when the identity the version installs as may not install its plan: nothing was
// applied. A version that is not installed yet is Failed (an upgrade's old version keeps running: it is replaced
// only by a Succeeded one); one that was Succeeded keeps running as it is, unchanged. Both look again, so granting the
// permission lets the install proceed.
func decideRefused(f facts, phase operatorsv1alpha1.OperatorVersionPhase, met metav1.Condition) verdict {
	v := verdict{conditions: []metav1.Condition{met, condition(operatorsv1alpha1.ConditionAuthorized, metav1.ConditionFalse,
		operatorsv1alpha1.ReasonInstallRefused, f.refused)}, requeueAfter: requeueRefused}
	if phase != operatorsv1alpha1.PhaseSucceeded {
		v.phase, v.reason, v.message = operatorsv1alpha1.PhaseFailed, operatorsv1alpha1.ReasonInstallRefused, f.refused
	}
	return v
}

// decideRollout is the decision once the plan was applied: conflicts and unsafe CRD updates fail the version;
// a failed rollout fails a version that has not Succeeded yet at once; otherwise it is Succeeded when every
// Deployment is rolled out, and Installing until the timeout.
func decideRollout(f facts, phase operatorsv1alpha1.OperatorVersionPhase) verdict {
	a := f.applied
	switch {
	case a.conflict != "":
		return failed(ReasonConflict, a.conflict)
	case a.unsafeCRD != "":
		v := failed(operatorsv1alpha1.ReasonCRDUnsafe, a.unsafeCRD)
		v.conditions = []metav1.Condition{condition(operatorsv1alpha1.ConditionRequirementsMet, metav1.ConditionFalse,
			operatorsv1alpha1.ReasonCRDUnsafe, a.unsafeCRD)}
		return v
	}
	msg := fmt.Sprintf("applied %d objects", a.objects)
	if len(a.skipped) > 0 {
		msg += fmt.Sprintf("; skipped %s (API not served)", strings.Join(a.skipped, ", "))
	}
	v := verdict{conditions: []metav1.Condition{condition(operatorsv1alpha1.ConditionInstalled, metav1.ConditionTrue,
		operatorsv1alpha1.ReasonInstalled, msg)}, requeueAfter: requeueRollout}
	waiting := strings.Join(a.notReady, "; ")
	switch {
	case len(a.failed) > 0 && phase != operatorsv1alpha1.PhaseSucceeded:
		v.phase, v.reason, v.message = operatorsv1alpha1.PhaseFailed, operatorsv1alpha1.ReasonProgressDeadlineExceeded, strings.Join(a.failed, "; ")
	case len(a.notReady) == 0:
		v.phase, v.reason, v.message = operatorsv1alpha1.PhaseSucceeded, operatorsv1alpha1.ReasonInstalled, "every Deployment is available"
		v.requeueAfter = 0
	case phase != operatorsv1alpha1.PhaseSucceeded && f.now.Sub(deadlineStart(f.status, f.now)) > f.timeout:
		v.phase, v.reason = operatorsv1alpha1.PhaseFailed, operatorsv1alpha1.ReasonInstallTimeout
		v.message = fmt.Sprintf("not available after %s: %s", f.timeout, waiting)
	default:
		v.phase, v.reason, v.message = operatorsv1alpha1.PhaseInstalling, operatorsv1alpha1.ReasonDeploymentNotReady, waiting
		if a.problem != "" {
			v.reason = a.problem // say why at once, not only the replica counts
		}
	}
	return v
}

// deadlineStart is when the install deadline started: when the version was installed (now, if it is being
// installed in this step), or when a version that was available stopped being so.
func deadlineStart(st *operatorsv1alpha1.OperatorVersionStatus, now time.Time) time.Time {
	since := now
	if installed := apimeta.FindStatusCondition(st.Conditions, operatorsv1alpha1.ConditionInstalled); installed != nil &&
		installed.Status == metav1.ConditionTrue {
		since = installed.LastTransitionTime.Time
	}
	if ready := apimeta.FindStatusCondition(st.Conditions, operatorsv1alpha1.ConditionReady); ready != nil &&
		ready.Status == metav1.ConditionFalse && ready.LastTransitionTime.After(since) {
		since = ready.LastTransitionTime.Time
	}
	return since
}

func failed(reason, msg string) verdict {
	return verdict{phase: operatorsv1alpha1.PhaseFailed, reason: reason, message: msg}
}

func condition(t string, s metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg}
}
