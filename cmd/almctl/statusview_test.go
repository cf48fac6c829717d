package main

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// An AppType none of whose versions has Succeeded yet shows the version being installed and why it is not running
// (seen on a real node: an image that cannot be pulled read "not resolved yet").
func TestStatusShowsTheVersionBeingInstalled(t *testing.T) {
	at := almv1alpha1.AppType{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "op"}, Spec: almv1alpha1.AppTypeSpec{Package: "op"}}
	ov := almv1alpha1.OperatorVersion{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "op.v1.0.0"},
		Spec:       almv1alpha1.OperatorVersionSpec{PackageName: "op"},
		Status: almv1alpha1.OperatorVersionStatus{Phase: almv1alpha1.PhaseInstalling, Reason: almv1alpha1.ReasonImagePullFailed,
			Message: "Deployment op: pod op-1 container operator: image alm.local/op:1.0.0 not found or not pullable"},
	}
	st := &clusterState{appTypes: []almv1alpha1.AppType{at}, versions: []almv1alpha1.OperatorVersion{ov},
		catalogs: map[string]*almv1alpha1.CatalogSource{}, now: time.Now()}
	var out strings.Builder
	writeSummary(&out, st, false)
	for _, want := range []string{"Installing", "ImagePullFailed: Deployment op", "alm.local/op:1.0.0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("almctl status does not say %q:\n%s", want, out.String())
		}
	}
}

// A halted rollout shows in almctl status: the AppType's WHY is the halt, and the rollout line names the wave, the
// counts and the install that failed.
func TestStatusShowsAHaltedRollout(t *testing.T) {
	at := almv1alpha1.AppType{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-05", Name: "op"}, Spec: almv1alpha1.AppTypeSpec{Package: "op"},
		Status: almv1alpha1.AppTypeStatus{InstalledVersion: "1.0.0", Conditions: []metav1.Condition{{Type: almv1alpha1.ConditionRolloutHalted,
			Status: metav1.ConditionTrue, Reason: almv1alpha1.ReasonInstallFailed,
			Message: "rollout of op 2.0.0 (CatalogSource alm-system/ops) halted in wave 1 of 3: install ns-00/op failed"}}}}
	cs := &almv1alpha1.CatalogSource{Status: almv1alpha1.CatalogSourceStatus{Rollouts: []almv1alpha1.RolloutStatus{{Package: "op", Version: "2.0.0",
		Phase: almv1alpha1.RolloutHalted, Wave: 1, Waves: 3, Installs: 20, Failed: 1, Pending: 19,
		Halt: &almv1alpha1.RolloutHalt{Install: "ns-00/op", Reason: "ProgressDeadlineExceeded", Message: "op.v2.0.0: pods crash"}}}}}
	st := &clusterState{appTypes: []almv1alpha1.AppType{at}, catalogs: map[string]*almv1alpha1.CatalogSource{"alm-system/ops": cs}, now: time.Now()}
	var out strings.Builder
	writeSummary(&out, st, false)
	for _, want := range []string{"RolloutHalted: rollout of op 2.0.0", "op 2.0.0 from alm-system/ops: Halted in wave 1 of 3, 0/20 upgraded",
		"19 waiting for their wave", "halted: install ns-00/op failed: ProgressDeadlineExceeded: op.v2.0.0: pods crash"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("almctl status does not say %q:\n%s", want, out.String())
		}
	}
	t.Logf("almctl status:\n%s", out.String())
}
