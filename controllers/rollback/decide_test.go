package rollback

import (
	"strings"
	"testing"
	"time"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

var t0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

func appType(mutate ...func(*operatorsv1alpha1.AppType)) *operatorsv1alpha1.AppType {
	at := &operatorsv1alpha1.AppType{Spec: operatorsv1alpha1.AppTypeSpec{Package: "p", Rollback: operatorsv1alpha1.RollbackAutomatic}}
	for _, m := range mutate {
		m(at)
	}
	return at
}

func ovOf(name, v string, mutate ...func(*operatorsv1alpha1.OperatorVersion)) operatorsv1alpha1.OperatorVersion {
	o := operatorsv1alpha1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: "uid-" + "name"},
		Spec: operatorsv1alpha1.OperatorVersionSpec{PackageName: "p", Version: version.OperatorVersion{Version: semver.MustParse(v)}}}
	for _, m := range mutate {
		m(&o)
	}
	return o
}

// tookOver: v2 took over from p.v1.0.0 at t0.
func tookOver(o *operatorsv1alpha1.OperatorVersion) {
	o.Spec.Replaces = "p.v1.0.0"
	o.Status.TakenOver = &operatorsv1alpha1.Takeover{From: "p.v1.0.0", Version: "1.0.0", At: metav1.NewTime(t0)}
}

// unready: not available since since (phase Installing, Ready=False), with reason.
func unready(since time.Time, reason string) func(*operatorsv1alpha1.OperatorVersion) {
	return func(o *operatorsv1alpha1.OperatorVersion) {
		o.Status.Phase, o.Status.Reason, o.Status.Message = operatorsv1alpha1.PhaseInstalling, reason, "deployment p-operator: 0 of 1 replicas ready"
		o.Status.Conditions = []metav1.Condition{{Type: operatorsv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: reason,
			LastTransitionTime: metav1.NewTime(since)}}
	}
}

func ready(o *operatorsv1alpha1.OperatorVersion) {
	o.Status.Phase, o.Status.Reason = operatorsv1alpha1.PhaseSucceeded, operatorsv1alpha1.ReasonInstalled
	o.Status.Conditions = []metav1.Condition{{Type: operatorsv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Installed",
		LastTransitionTime: metav1.NewTime(t0)}}
}

func TestAutomatic(t *testing.T) {
	notAvailable := operatorsv1alpha1.ReasonDeploymentNotReady
	cases := []struct {
		name     string
		at       *operatorsv1alpha1.AppType
		v2       operatorsv1alpha1.OperatorVersion
		others   []operatorsv1alpha1.OperatorVersion
		now      time.Time
		rollBack bool
		wait     time.Duration
	}{
		{name: "unavailable longer than rollbackAfter (default 5m) within the window", at: appType(),
			v2: ovOf("p.v2.0.0", "2.0.0", tookOver, unready(t0.Add(time.Minute), notAvailable)), now: t0.Add(6 * time.Minute), rollBack: true},
		{name: "unavailable for less than rollbackAfter: wait for the rest", at: appType(),
			v2: ovOf("p.v2.0.0", "2.0.0", tookOver, unready(t0.Add(time.Minute), notAvailable)), now: t0.Add(3 * time.Minute), wait: 3 * time.Minute},
		{name: "rollbackAfter from the spec", at: appType(func(a *operatorsv1alpha1.AppType) { a.Spec.RollbackAfter = &metav1.Duration{Duration: 5 * time.Second} }),
			v2: ovOf("p.v2.0.0", "2.0.0", tookOver, unready(t0.Add(time.Minute), notAvailable)), now: t0.Add(time.Minute + 5*time.Second), rollBack: true},
		{name: "Never", at: appType(func(a *operatorsv1alpha1.AppType) { a.Spec.Rollback = operatorsv1alpha1.RollbackNever }),
			v2: ovOf("p.v2.0.0", "2.0.0", tookOver, unready(t0.Add(time.Minute), notAvailable)), now: t0.Add(time.Hour)},
		{name: "default (empty) is Never", at: appType(func(a *operatorsv1alpha1.AppType) { a.Spec.Rollback = "" }),
			v2: ovOf("p.v2.0.0", "2.0.0", tookOver, unready(t0.Add(time.Minute), notAvailable)), now: t0.Add(time.Hour)},
		{name: "available", at: appType(), v2: ovOf("p.v2.0.0", "2.0.0", tookOver, ready), now: t0.Add(time.Hour)},
		{name: "stopped being available after the window (default 1h): fail forward", at: appType(),
			v2: ovOf("p.v2.0.0", "2.0.0", tookOver, unready(t0.Add(61*time.Minute), notAvailable)), now: t0.Add(2 * time.Hour)},
		{name: "stopped within a window from the spec", at: appType(func(a *operatorsv1alpha1.AppType) { a.Spec.RollbackWindow = &metav1.Duration{Duration: 3 * time.Hour} }),
			v2: ovOf("p.v2.0.0", "2.0.0", tookOver, unready(t0.Add(61*time.Minute), notAvailable)), now: t0.Add(2 * time.Hour), rollBack: true},
		{name: "unavailable since before it took over counts from the takeover", at: appType(),
			v2: ovOf("p.v2.0.0", "2.0.0", tookOver, unready(t0.Add(-time.Minute), notAvailable)), now: t0.Add(4 * time.Minute), wait: time.Minute},
		{name: "failed after the install timeout", at: appType(),
			v2: ovOf("p.v2.0.0", "2.0.0", tookOver, unready(t0.Add(time.Minute), notAvailable), func(o *operatorsv1alpha1.OperatorVersion) {
				o.Status.Phase, o.Status.Reason = operatorsv1alpha1.PhaseFailed, operatorsv1alpha1.ReasonInstallTimeout
			}), now: t0.Add(10 * time.Minute), rollBack: true},
		{name: "crash looping", at: appType(),
			v2: ovOf("p.v2.0.0", "2.0.0", tookOver, unready(t0.Add(time.Minute), operatorsv1alpha1.ReasonCrashLoopBackOff)), now: t0.Add(10 * time.Minute), rollBack: true},
		{name: "not ready for another reason (permissions) is not judged", at: appType(),
			v2: ovOf("p.v2.0.0", "2.0.0", tookOver, unready(t0.Add(time.Minute), operatorsv1alpha1.ReasonInstallRefused)), now: t0.Add(time.Hour)},
		{name: "first install: nothing to go back to", at: appType(),
			v2: ovOf("p.v2.0.0", "2.0.0", unready(t0.Add(time.Minute), notAvailable)), now: t0.Add(time.Hour)},
		{name: "the old version is not collected yet (still taking over)", at: appType(),
			v2:     ovOf("p.v2.0.0", "2.0.0", tookOver, unready(t0.Add(time.Minute), notAvailable)),
			others: []operatorsv1alpha1.OperatorVersion{ovOf("p.v1.0.0", "1.0.0")}, now: t0.Add(time.Hour)},
		{name: "a rollback is not rolled back", at: appType(),
			v2: ovOf("p.v2.0.0", "2.0.0", tookOver, unready(t0.Add(time.Minute), notAvailable), func(o *operatorsv1alpha1.OperatorVersion) {
				o.Spec.RollbackFrom = &operatorsv1alpha1.RollbackSource{Name: "p.v3.0.0", Version: "3.0.0"}
			}), now: t0.Add(time.Hour)},
		{name: "the previous version was itself rolled back from", at: appType(func(a *operatorsv1alpha1.AppType) {
			a.Status.RolledBack = []operatorsv1alpha1.RolledBackVersion{{Name: "p.v1.0.0"}}
		}), v2: ovOf("p.v2.0.0", "2.0.0", tookOver, unready(t0.Add(time.Minute), notAvailable)), now: t0.Add(time.Hour)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			all := append([]operatorsv1alpha1.OperatorVersion{tc.v2}, tc.others...)
			d := Automatic(tc.at, &all[0], all, tc.now)
			if d.RollBack != tc.rollBack || d.RequeueAfter != tc.wait {
				t.Fatalf("RollBack %v, RequeueAfter %s; want %v, %s", d.RollBack, d.RequeueAfter, tc.rollBack, tc.wait)
			}
			if !d.RollBack {
				return
			}
			if d.Target != "p.v1.0.0" || d.TargetVersion.String() != "1.0.0" || !d.Automatic || d.From.Name != "p.v2.0.0" {
				t.Errorf("decision %+v, want an automatic rollback of p.v2.0.0 to p.v1.0.0", d)
			}
			if !strings.HasPrefix(d.Reason, "p.v2.0.0 was not available for ") || !strings.Contains(d.Reason, "after taking over: deployment p-operator") {
				t.Errorf("reason %q does not name the version, the time and the problem", d.Reason)
			}
		})
	}
}

func TestDowngrade(t *testing.T) {
	available := []semver.Version{semver.MustParse("1.0.0"), semver.MustParse("1.1.0"), semver.MustParse("2.0.0")}
	manual := func(v string) func(*operatorsv1alpha1.AppType) {
		return func(a *operatorsv1alpha1.AppType) {
			a.Spec.Approval, a.Spec.ApprovedVersion = operatorsv1alpha1.ApprovalManual, v
		}
	}
	rng := func(r string) func(*operatorsv1alpha1.AppType) {
		return func(a *operatorsv1alpha1.AppType) { a.Spec.VersionRange = r }
	}
	cases := []struct {
		name    string
		at      *operatorsv1alpha1.AppType
		others  []operatorsv1alpha1.OperatorVersion
		target  string // "" for none
		refused bool
		asks    bool // AsksOlder although nothing is downgraded to
	}{
		{name: "approvedVersion names an older version", at: appType(manual("1.0.0")), target: "1.0.0"},
		{name: "approvedVersion names the installed version", at: appType(manual("2.0.0"))},
		{name: "approvedVersion names a newer version (an upgrade)", at: appType(manual("3.0.0"))},
		{name: "approvedVersion with Automatic approval is not a downgrade", at: appType(manual("1.0.0"), func(a *operatorsv1alpha1.AppType) {
			a.Spec.Approval = operatorsv1alpha1.ApprovalAutomatic
		})},
		{name: "approvedVersion names a version no catalog has", at: appType(manual("0.9.0")), refused: true},
		{name: "range excludes the installed version: highest older one in it", at: appType(rng("<2.0.0")), target: "1.1.0"},
		{name: "range includes the installed version", at: appType(rng(">=1.0.0"))},
		{name: "range excludes the installed version and has no older one", at: appType(rng(">=3.0.0")), asks: true},
		{name: "an upgrade is under way", at: appType(manual("1.0.0")), others: []operatorsv1alpha1.OperatorVersion{ovOf("p.v1.1.0", "1.1.0")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			installed := ovOf("p.v2.0.0", "2.0.0", ready, func(o *operatorsv1alpha1.OperatorVersion) { o.Spec.Replaces = "p.v1.1.0" })
			all := append([]operatorsv1alpha1.OperatorVersion{installed}, tc.others...)
			d := Downgrade(tc.at, &all[0], all, available)
			if asks := AsksOlder(tc.at, &all[0]); asks != (tc.target != "" || tc.refused || tc.asks) && len(tc.others) == 0 {
				t.Errorf("AsksOlder = %v", asks)
			}
			got := ""
			if d.RollBack {
				got = d.TargetVersion.String()
			}
			if got != tc.target || (d.Refused != "") != tc.refused {
				t.Fatalf("downgrade to %q (refused %q), want %q (refused %v)", got, d.Refused, tc.target, tc.refused)
			}
			if d.RollBack && (d.Automatic || d.From.Name != "p.v2.0.0" || d.Reason == "") {
				t.Errorf("decision %+v, want a downgrade from p.v2.0.0 with a reason", d)
			}
		})
	}
}
