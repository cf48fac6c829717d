package rollback

import (
	"fmt"
	"testing"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

func TestRecord(t *testing.T) {
	back := func(automatic bool, phase ...operatorsv1alpha1.OperatorVersionPhase) *operatorsv1alpha1.OperatorVersion {
		o := ovOf("p.v1.0.0", "1.0.0", func(o *operatorsv1alpha1.OperatorVersion) {
			o.Status.Phase = operatorsv1alpha1.PhaseSucceeded
			if len(phase) > 0 {
				o.Status.Phase = phase[0]
			}
			o.Spec.RollbackFrom = &operatorsv1alpha1.RollbackSource{Name: "p.v2.0.0", Version: "2.0.0", Automatic: automatic,
				Reason: "p.v2.0.0 was not available for 5s after taking over: x"}
		})
		return &o
	}
	plain := ovOf("p.v2.0.1", "2.0.1")
	full := make([]operatorsv1alpha1.RolledBackVersion, maxRolledBack)
	for i := range full {
		full[i].Name = fmt.Sprintf("p.v0.0.%d", i)
	}
	cases := []struct {
		name       string
		before     operatorsv1alpha1.AppTypeStatus
		installed  *operatorsv1alpha1.OperatorVersion
		refused    string
		wantStatus metav1.ConditionStatus // "" for no condition
		wantReason string
		wantListed []string
	}{
		{name: "automatic rollback: listed, condition names it", installed: back(true),
			wantStatus: metav1.ConditionTrue, wantReason: operatorsv1alpha1.ReasonAutomaticRollback, wantListed: []string{"p.v2.0.0"}},
		{name: "listed once", installed: back(true), before: operatorsv1alpha1.AppTypeStatus{RolledBack: []operatorsv1alpha1.RolledBackVersion{{Name: "p.v2.0.0"}}},
			wantStatus: metav1.ConditionTrue, wantReason: operatorsv1alpha1.ReasonAutomaticRollback, wantListed: []string{"p.v2.0.0"}},
		{name: "while the older version installs: Unknown, listed already", installed: back(true, operatorsv1alpha1.PhaseInstalling),
			wantStatus: metav1.ConditionUnknown, wantReason: operatorsv1alpha1.ReasonAutomaticRollback, wantListed: []string{"p.v2.0.0"}},
		{name: "the older version failed", installed: back(false, operatorsv1alpha1.PhaseFailed),
			wantStatus: metav1.ConditionFalse, wantReason: operatorsv1alpha1.ReasonRollbackFailed},
		{name: "a downgrade is not listed", installed: back(false), wantStatus: metav1.ConditionTrue, wantReason: operatorsv1alpha1.ReasonDowngraded},
		{name: "refused", installed: &plain, refused: "CRD widgets: ...", wantStatus: metav1.ConditionFalse, wantReason: operatorsv1alpha1.ReasonRollbackRefused},
		{name: "a refusal that no longer applies is cleared", installed: &plain, before: operatorsv1alpha1.AppTypeStatus{Conditions: []metav1.Condition{{
			Type: operatorsv1alpha1.ConditionRolledBack, Status: metav1.ConditionFalse, Reason: operatorsv1alpha1.ReasonRollbackRefused}}}},
		{name: "a rollback stays on record after a later upgrade", installed: &plain, before: operatorsv1alpha1.AppTypeStatus{
			RolledBack: []operatorsv1alpha1.RolledBackVersion{{Name: "p.v2.0.0"}},
			Conditions: []metav1.Condition{{Type: operatorsv1alpha1.ConditionRolledBack, Status: metav1.ConditionTrue, Reason: operatorsv1alpha1.ReasonAutomaticRollback}}},
			wantStatus: metav1.ConditionTrue, wantReason: operatorsv1alpha1.ReasonAutomaticRollback, wantListed: []string{"p.v2.0.0"}},
		{name: "the list is bounded, the oldest go", installed: back(true), before: operatorsv1alpha1.AppTypeStatus{RolledBack: full},
			wantStatus: metav1.ConditionTrue, wantReason: operatorsv1alpha1.ReasonAutomaticRollback,
			wantListed: append(names(full[1:]), "p.v2.0.0")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.before.DeepCopy()
			Record(st, appType(), tc.installed, tc.refused)
			c := apimeta.FindStatusCondition(st.Conditions, operatorsv1alpha1.ConditionRolledBack)
			switch {
			case tc.wantStatus == "" && c != nil:
				t.Errorf("condition %+v, want none", c)
			case tc.wantStatus != "" && (c == nil || c.Status != tc.wantStatus || c.Reason != tc.wantReason):
				t.Errorf("condition %+v, want %s %s", c, tc.wantStatus, tc.wantReason)
			}
			if got := names(st.RolledBack); fmt.Sprint(got) != fmt.Sprint(tc.wantListed) {
				t.Errorf("rolledBack %v, want %v", got, tc.wantListed)
			}
		})
	}
}

func names(list []operatorsv1alpha1.RolledBackVersion) []string {
	var out []string
	for _, rb := range list {
		out = append(out, rb.Name)
	}
	return out
}
