package installer

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

func TestDecide(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	const timeout = 5 * time.Minute
	status := func(phase operatorsv1alpha1.OperatorVersionPhase, reason string, conds ...metav1.Condition) *operatorsv1alpha1.OperatorVersionStatus {
		return &operatorsv1alpha1.OperatorVersionStatus{Phase: phase, Reason: reason, Conditions: conds}
	}
	cond := func(t string, s metav1.ConditionStatus, ago time.Duration) metav1.Condition {
		return metav1.Condition{Type: t, Status: s, Reason: "R", LastTransitionTime: metav1.NewTime(now.Add(-ago))}
	}
	installing := status(operatorsv1alpha1.PhaseInstalling, operatorsv1alpha1.ReasonDeploymentNotReady,
		cond(operatorsv1alpha1.ConditionInstalled, metav1.ConditionTrue, time.Minute))
	succeeded := status(operatorsv1alpha1.PhaseSucceeded, operatorsv1alpha1.ReasonInstalled,
		cond(operatorsv1alpha1.ConditionInstalled, metav1.ConditionTrue, time.Hour), cond(operatorsv1alpha1.ConditionReady, metav1.ConditionTrue, time.Hour))
	verified := &bundleCheck{verified: "bundle image r verified at sha256:a"}
	mismatch := &bundleCheck{reason: operatorsv1alpha1.ReasonDigestMismatch, message: "digest sha256:b, want sha256:a", permanent: true}
	unpullable := &bundleCheck{reason: operatorsv1alpha1.ReasonRegistryUnreachable, message: "bundle image r (sha256:a) cannot be pulled: 503"}
	pde := "Deployment op: progress deadline exceeded: ReplicaSet has timed out progressing. (CrashLoopBackOff: exit code 1: boom)"
	cases := []struct {
		name  string
		f     facts
		phase operatorsv1alpha1.OperatorVersionPhase
		// reason of the phase; message, when set, must match.
		reason, message string
		requeue         time.Duration
		apply, term     bool
		conds           []string // condition type=status in order
	}{
		{name: "terminally failed: nothing changes", f: facts{status: status(operatorsv1alpha1.PhaseFailed, ReasonConflict)}},
		{name: "failed for a reason that may clear: goes on", f: facts{status: status(operatorsv1alpha1.PhaseFailed, operatorsv1alpha1.ReasonInstallTimeout)},
			apply: true},
		{name: "invalid strategy", f: facts{status: status("", ""), invalid: "no deployments"},
			phase: operatorsv1alpha1.PhaseFailed, reason: operatorsv1alpha1.ReasonInvalidStrategy, message: "no deployments", term: true},
		{name: "required CRD missing", f: facts{status: status("", ""), missing: []string{"a.example.com"}, age: time.Minute, timeout: timeout},
			phase: operatorsv1alpha1.PhasePending, reason: operatorsv1alpha1.ReasonRequirementMissing, message: "waiting for required CRDs: a.example.com",
			requeue: requeueRequirements, conds: []string{"RequirementsMet=False"}},
		{name: "required CRD missing past the timeout", f: facts{status: status(operatorsv1alpha1.PhasePending, ""), missing: []string{"a", "b (not established)"}, age: 6 * time.Minute, timeout: timeout},
			phase: operatorsv1alpha1.PhaseFailed, reason: operatorsv1alpha1.ReasonRequirementMissing, message: "waiting for required CRDs: a, b (not established)",
			requeue: requeueRequirements, conds: []string{"RequirementsMet=False"}},
		{name: "requirements met: apply in the same step", f: facts{status: status(operatorsv1alpha1.PhasePending, "")}, apply: true},
		{name: "new version, requirements met: apply", f: facts{status: status("", "")}, apply: true},
		{name: "new version applied, rolling out: Installing", f: facts{status: status("", ""), now: now, timeout: timeout, applied: &applied{objects: 7, notReady: []string{"Deployment op: 0 of 1"}}},
			phase: operatorsv1alpha1.PhaseInstalling, reason: operatorsv1alpha1.ReasonDeploymentNotReady, message: "Deployment op: 0 of 1", requeue: requeueRollout,
			conds: []string{"RequirementsMet=True", "Installed=True"}},
		{name: "rolling out, and the cluster says why: that reason at once", f: facts{status: status(operatorsv1alpha1.PhaseInstalling, ""), now: now, timeout: timeout,
			applied: &applied{objects: 7, notReady: []string{"Deployment op: image x not found (0 of 1 replicas updated)"}, problem: operatorsv1alpha1.ReasonImagePullFailed}},
			phase: operatorsv1alpha1.PhaseInstalling, reason: operatorsv1alpha1.ReasonImagePullFailed, message: "Deployment op: image x not found (0 of 1 replicas updated)",
			requeue: requeueRollout, conds: []string{"RequirementsMet=True", "Installed=True"}},
		{name: "InstallReady: apply", f: facts{status: status(operatorsv1alpha1.PhaseInstallReady, "")}, apply: true},
		{name: "conflict", f: facts{status: status(operatorsv1alpha1.PhaseInstallReady, ""), applied: &applied{conflict: "ServiceAccount sa belongs to x"}},
			phase: operatorsv1alpha1.PhaseFailed, reason: ReasonConflict, message: "ServiceAccount sa belongs to x", term: true, conds: []string{"RequirementsMet=True"}},
		{name: "unsafe CRD update", f: facts{status: status(operatorsv1alpha1.PhaseInstallReady, ""), applied: &applied{unsafeCRD: "drops stored version v1"}},
			phase: operatorsv1alpha1.PhaseFailed, reason: operatorsv1alpha1.ReasonCRDUnsafe, term: true, conds: []string{"RequirementsMet=True", "RequirementsMet=False"}},
		{name: "every Deployment available", f: facts{status: status(operatorsv1alpha1.PhaseInstallReady, ""), now: now, timeout: timeout, applied: &applied{objects: 3}},
			phase: operatorsv1alpha1.PhaseSucceeded, reason: operatorsv1alpha1.ReasonInstalled, conds: []string{"RequirementsMet=True", "Installed=True"}},
		{name: "rolling out", f: facts{status: status(operatorsv1alpha1.PhaseInstallReady, ""), now: now, timeout: timeout, applied: &applied{objects: 3, notReady: []string{"Deployment op: 0 of 1"}}},
			phase: operatorsv1alpha1.PhaseInstalling, reason: operatorsv1alpha1.ReasonDeploymentNotReady, message: "Deployment op: 0 of 1", requeue: requeueRollout,
			conds: []string{"RequirementsMet=True", "Installed=True"}},
		{name: "progress deadline exceeded fails at once, with the pods' reason", f: facts{status: installing, now: now, timeout: timeout,
			applied: &applied{notReady: []string{pde}, failed: []string{pde}}},
			phase: operatorsv1alpha1.PhaseFailed, reason: operatorsv1alpha1.ReasonProgressDeadlineExceeded, message: pde, requeue: requeueRollout,
			conds: []string{"RequirementsMet=True", "Installed=True"}},
		{name: "a Succeeded version is not failed by a failed rollout", f: facts{status: succeeded, now: now, timeout: timeout,
			applied: &applied{notReady: []string{pde}, failed: []string{pde}}},
			phase: operatorsv1alpha1.PhaseInstalling, reason: operatorsv1alpha1.ReasonDeploymentNotReady, message: pde, requeue: requeueRollout,
			conds: []string{"RequirementsMet=True", "Installed=True"}},
		{name: "not available within the timeout", f: facts{status: status(operatorsv1alpha1.PhaseInstalling, "",
			cond(operatorsv1alpha1.ConditionInstalled, metav1.ConditionTrue, 6*time.Minute)), now: now, timeout: timeout, applied: &applied{notReady: []string{"Deployment op: 0 of 1"}}},
			phase: operatorsv1alpha1.PhaseFailed, reason: operatorsv1alpha1.ReasonInstallTimeout, message: "not available after 5m0s: Deployment op: 0 of 1",
			requeue: requeueRollout, conds: []string{"RequirementsMet=True", "Installed=True"}},
		{name: "the deadline runs again from when a version stopped being available", f: facts{status: status(operatorsv1alpha1.PhaseInstalling, "",
			cond(operatorsv1alpha1.ConditionInstalled, metav1.ConditionTrue, time.Hour), cond(operatorsv1alpha1.ConditionReady, metav1.ConditionFalse, time.Minute)),
			now: now, timeout: timeout, applied: &applied{notReady: []string{"Deployment op: 0 of 1"}}},
			phase: operatorsv1alpha1.PhaseInstalling, reason: operatorsv1alpha1.ReasonDeploymentNotReady, requeue: requeueRollout,
			conds: []string{"RequirementsMet=True", "Installed=True"}},
		{name: "a Succeeded version that stops being available is never timed out", f: facts{status: succeeded, now: now.Add(time.Hour), timeout: timeout,
			applied: &applied{notReady: []string{"Deployment op: 0 of 1"}}},
			phase: operatorsv1alpha1.PhaseInstalling, reason: operatorsv1alpha1.ReasonDeploymentNotReady, requeue: requeueRollout,
			conds: []string{"RequirementsMet=True", "Installed=True"}},
		// Access (access.Checker): nothing is applied for an identity that may not install the plan; retried.
		{name: "refused new version: Failed, retried, nothing applied", f: facts{status: status("", ""), refused: "missing: kubectl auth can-i get secrets"},
			phase: operatorsv1alpha1.PhaseFailed, reason: operatorsv1alpha1.ReasonInstallRefused, message: "missing: kubectl auth can-i get secrets",
			requeue: requeueRefused, conds: []string{"RequirementsMet=True", "Authorized=False"}},
		{name: "refused re-apply of a Succeeded version: it keeps running as it is", f: facts{status: succeeded, refused: "missing"},
			requeue: requeueRefused, conds: []string{"RequirementsMet=True", "Authorized=False"}},
		{name: "refused, then granted: apply", f: facts{status: status(operatorsv1alpha1.PhaseFailed, operatorsv1alpha1.ReasonInstallRefused)}, apply: true},
		{name: "refused, then granted and applied: Authorized again", f: facts{status: status(operatorsv1alpha1.PhaseFailed, operatorsv1alpha1.ReasonInstallRefused,
			cond(operatorsv1alpha1.ConditionAuthorized, metav1.ConditionFalse, time.Minute)), now: now, timeout: timeout, applied: &applied{objects: 3}},
			phase: operatorsv1alpha1.PhaseSucceeded, reason: operatorsv1alpha1.ReasonInstalled, conds: []string{"RequirementsMet=True", "Installed=True", "Authorized=True"}},
		// Bundle verification (bundlecontent): nothing is applied from content that is not verified.
		{name: "verified content: the condition comes first, then the install", f: facts{status: status(operatorsv1alpha1.PhaseInstallReady, ""), now: now, timeout: timeout,
			bundle: verified, applied: &applied{objects: 3}},
			phase: operatorsv1alpha1.PhaseSucceeded, reason: operatorsv1alpha1.ReasonInstalled, conds: []string{"BundleVerified=True", "RequirementsMet=True", "Installed=True"}},
		{name: "verified content, requirements met: apply", f: facts{status: status("", ""), bundle: verified}, apply: true, conds: []string{"BundleVerified=True"}},
		{name: "digest mismatch fails for good, before anything is applied", f: facts{status: status("", ""), bundle: mismatch},
			phase: operatorsv1alpha1.PhaseFailed, reason: operatorsv1alpha1.ReasonDigestMismatch, message: mismatch.message, term: true, conds: []string{"BundleVerified=False"}},
		{name: "digest mismatch fails even a Succeeded version (its spec was edited); nothing is applied", f: facts{status: succeeded, bundle: mismatch},
			phase: operatorsv1alpha1.PhaseFailed, reason: operatorsv1alpha1.ReasonDigestMismatch, term: true, conds: []string{"BundleVerified=False"}},
		{name: "invalid bundle image fails for good", f: facts{status: status(operatorsv1alpha1.PhasePending, ""), bundle: &bundleCheck{reason: operatorsv1alpha1.ReasonInvalidBundle, message: "m", permanent: true}},
			phase: operatorsv1alpha1.PhaseFailed, reason: operatorsv1alpha1.ReasonInvalidBundle, term: true, conds: []string{"BundleVerified=False"}},
		{name: "unpullable image: Pending, retried", f: facts{status: status("", ""), bundle: unpullable, age: time.Minute, timeout: timeout},
			phase: operatorsv1alpha1.PhasePending, reason: operatorsv1alpha1.ReasonBundleUnavailable, message: unpullable.message, requeue: requeueBundle, conds: []string{"BundleVerified=False"}},
		{name: "unpullable image past the timeout: Failed, still retried", f: facts{status: status(operatorsv1alpha1.PhasePending, operatorsv1alpha1.ReasonBundleUnavailable), bundle: unpullable, age: 6 * time.Minute, timeout: timeout},
			phase: operatorsv1alpha1.PhaseFailed, reason: operatorsv1alpha1.ReasonBundleUnavailable, requeue: requeueBundle, conds: []string{"BundleVerified=False"}},
		{name: "failed waiting for the image, then pulled: apply", f: facts{status: status(operatorsv1alpha1.PhaseFailed, operatorsv1alpha1.ReasonBundleUnavailable), bundle: verified},
			apply: true, conds: []string{"BundleVerified=True"}},
		{name: "unpullable image of an installed version: the phase stays, nothing is applied", f: facts{status: succeeded, bundle: unpullable, age: time.Hour, timeout: timeout},
			requeue: requeueBundle, conds: []string{"BundleVerified=False"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := decide(tc.f)
			if v.phase != tc.phase || v.reason != tc.reason || v.requeueAfter != tc.requeue || v.apply != tc.apply || v.terminal() != tc.term {
				t.Fatalf("decide = phase %q reason %q requeue %s apply %v terminal %v, want %q %q %s %v %v",
					v.phase, v.reason, v.requeueAfter, v.apply, v.terminal(), tc.phase, tc.reason, tc.requeue, tc.apply, tc.term)
			}
			if tc.message != "" && v.message != tc.message {
				t.Errorf("message %q, want %q", v.message, tc.message)
			}
			var conds []string
			for _, c := range v.conditions {
				conds = append(conds, c.Type+"="+string(c.Status))
			}
			if len(conds) != len(tc.conds) {
				t.Fatalf("conditions %v, want %v", conds, tc.conds)
			}
			for i := range conds {
				if conds[i] != tc.conds[i] {
					t.Fatalf("conditions %v, want %v", conds, tc.conds)
				}
			}
		})
	}
}
