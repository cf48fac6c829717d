package waves

import (
	"testing"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/index"
)

const catalog = "alm-system/ops"

func ov(name, v string, mutate ...func(*operatorsv1alpha1.OperatorVersion)) operatorsv1alpha1.OperatorVersion {
	o := operatorsv1alpha1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: operatorsv1alpha1.OperatorVersionSpec{PackageName: "p", Version: version.OperatorVersion{Version: semver.MustParse(v)},
			Source: &operatorsv1alpha1.CatalogReference{Namespace: "alm-system", Name: "ops"}},
		Status: operatorsv1alpha1.OperatorVersionStatus{Phase: operatorsv1alpha1.PhaseSucceeded}}
	for _, m := range mutate {
		m(&o)
	}
	return o
}

func byRollout(target, v string) func(*operatorsv1alpha1.OperatorVersion) {
	return func(o *operatorsv1alpha1.OperatorVersion) {
		o.Annotations = map[string]string{operatorsv1alpha1.AnnotationRolloutTarget: target, operatorsv1alpha1.AnnotationRolloutVersion: v}
	}
}

func replacesV1(o *operatorsv1alpha1.OperatorVersion) { o.Spec.Replaces = "p.v1.0.0" }

func phase(p operatorsv1alpha1.OperatorVersionPhase, reason string) func(*operatorsv1alpha1.OperatorVersion) {
	return func(o *operatorsv1alpha1.OperatorVersion) { o.Status.Phase, o.Status.Reason = p, reason }
}

func TestClassify(t *testing.T) {
	v2 := &index.Candidate{Name: "p.v2.0.0", Version: semver.MustParse("2.0.0"), Catalog: catalog}
	v3 := &index.Candidate{Name: "p.v3.0.0", Version: semver.MustParse("3.0.0"), Catalog: catalog}
	manual := &operatorsv1alpha1.AppType{Spec: operatorsv1alpha1.AppTypeSpec{Package: "p", Approval: operatorsv1alpha1.ApprovalManual}}
	cases := []struct {
		name   string
		at     *operatorsv1alpha1.AppType
		all    []operatorsv1alpha1.OperatorVersion
		chosen *index.Candidate
		target string
		state  State
		ok     bool
	}{
		{name: "on 1.0.0, 2.0.0 offered: pending", all: []operatorsv1alpha1.OperatorVersion{ov("p.v1.0.0", "1.0.0")}, chosen: v2,
			target: "p.v2.0.0", state: Pending, ok: true},
		{name: "Manual without approval: held", at: manual, all: []operatorsv1alpha1.OperatorVersion{ov("p.v1.0.0", "1.0.0")}, chosen: v2,
			target: "p.v2.0.0", state: Held, ok: true},
		{name: "offered from another catalog: not this catalog's", all: []operatorsv1alpha1.OperatorVersion{ov("p.v1.0.0", "1.0.0")},
			chosen: &index.Candidate{Name: "p.v2.0.0", Version: semver.MustParse("2.0.0"), Catalog: "ns/other"}},
		{name: "2.0.0 created by the rollout, not yet written", all: []operatorsv1alpha1.OperatorVersion{ov("p.v1.0.0", "1.0.0"),
			ov("p.v2.0.0", "2.0.0", replacesV1, byRollout("p.v2.0.0", "2.0.0"), phase("", ""))}, target: "p.v2.0.0", state: Upgrading, ok: true},
		{name: "2.0.0 Succeeded but 1.0.0 not collected: upgrading", all: []operatorsv1alpha1.OperatorVersion{ov("p.v1.0.0", "1.0.0"),
			ov("p.v2.0.0", "2.0.0", replacesV1, byRollout("p.v2.0.0", "2.0.0"))}, target: "p.v2.0.0", state: Upgrading, ok: true},
		{name: "2.0.0 alone: upgraded", all: []operatorsv1alpha1.OperatorVersion{ov("p.v2.0.0", "2.0.0", replacesV1, byRollout("p.v2.0.0", "2.0.0"))},
			target: "p.v2.0.0", state: Upgraded, ok: true},
		{name: "2.0.0 failed before it took over", all: []operatorsv1alpha1.OperatorVersion{ov("p.v1.0.0", "1.0.0"),
			ov("p.v2.0.0", "2.0.0", replacesV1, byRollout("p.v2.0.0", "2.0.0"), phase(operatorsv1alpha1.PhaseFailed, operatorsv1alpha1.ReasonProgressDeadlineExceeded))},
			target: "p.v2.0.0", state: Failed, ok: true},
		{name: "2.0.0 failed, 3.0.0 offered: pending in 3.0.0's rollout", all: []operatorsv1alpha1.OperatorVersion{ov("p.v1.0.0", "1.0.0"),
			ov("p.v2.0.0", "2.0.0", replacesV1, byRollout("p.v2.0.0", "2.0.0"), phase(operatorsv1alpha1.PhaseFailed, operatorsv1alpha1.ReasonProgressDeadlineExceeded))},
			chosen: v3, target: "p.v3.0.0", state: Pending, ok: true},
		{name: "2.0.0 unavailable after it took over", all: []operatorsv1alpha1.OperatorVersion{ov("p.v2.0.0", "2.0.0", replacesV1, byRollout("p.v2.0.0", "2.0.0"),
			func(o *operatorsv1alpha1.OperatorVersion) {
				o.Status.TakenOver = &operatorsv1alpha1.Takeover{From: "p.v1.0.0"}
				o.Status.Phase, o.Status.Reason = operatorsv1alpha1.PhaseInstalling, operatorsv1alpha1.ReasonProgressDeadlineExceeded
				o.Status.Conditions = []metav1.Condition{{Type: operatorsv1alpha1.ConditionReady, Status: metav1.ConditionFalse}}
			})}, target: "p.v2.0.0", state: Failed, ok: true},
		{name: "rolled back from 2.0.0 automatically", all: []operatorsv1alpha1.OperatorVersion{ov("p.v1.0.0", "1.0.0", func(o *operatorsv1alpha1.OperatorVersion) {
			o.Spec.RollbackFrom = &operatorsv1alpha1.RollbackSource{Name: "p.v2.0.0", Version: "2.0.0", Automatic: true, Reason: "not available"}
		})}, target: "p.v2.0.0", state: Failed, ok: true},
		{name: "rolled back from 2.0.0 automatically, the rollback not yet written, 2.0.0 still offered", all: []operatorsv1alpha1.OperatorVersion{
			ov("p.v1.0.0", "1.0.0", phase("", ""), func(o *operatorsv1alpha1.OperatorVersion) {
				o.Spec.RollbackFrom = &operatorsv1alpha1.RollbackSource{Name: "p.v2.0.0", Version: "2.0.0", Automatic: true, Reason: "not available"}
			})}, chosen: v2, target: "p.v2.0.0", state: Failed, ok: true},
		{name: "a downgrade the user asked for is not a rollout's", all: []operatorsv1alpha1.OperatorVersion{ov("p.v1.0.0", "1.0.0", func(o *operatorsv1alpha1.OperatorVersion) {
			o.Spec.RollbackFrom = &operatorsv1alpha1.RollbackSource{Name: "p.v2.0.0", Version: "2.0.0"}
		})}},
		{name: "installed at 2.0.0 from the catalog: upgraded", all: []operatorsv1alpha1.OperatorVersion{ov("p.v2.0.0", "2.0.0")},
			target: "p.v2.0.0", state: Upgraded, ok: true},
		{name: "first install under way: none", all: []operatorsv1alpha1.OperatorVersion{ov("p.v2.0.0", "2.0.0", phase("", ""))}},
		{name: "a hop took over: upgrading, next hop due", all: []operatorsv1alpha1.OperatorVersion{ov("p.v1.5.0", "1.5.0", replacesV1, byRollout("p.v2.0.0", "2.0.0"))},
			target: "p.v2.0.0", state: Upgrading, ok: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			at := tc.at
			if at == nil {
				at = &operatorsv1alpha1.AppType{Spec: operatorsv1alpha1.AppTypeSpec{Package: "p"}}
			}
			target, in, ok := Classify(at, tc.all, tc.chosen, catalog)
			if ok != tc.ok || (ok && (target.Bundle != tc.target || in.State != tc.state)) {
				t.Fatalf("Classify = %s %d %v, want %s %d %v", target.Bundle, in.State, ok, tc.target, tc.state, tc.ok)
			}
			if in.State == Failed && in.Reason == "" {
				t.Errorf("failed without a reason: %+v", in)
			}
		})
	}
}
