package gc

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

func TestCollectable(t *testing.T) {
	old := &operatorsv1alpha1.OperatorVersion{}
	deleting := &operatorsv1alpha1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: ptr.To(metav1.Now())}}
	phase := func(p operatorsv1alpha1.OperatorVersionPhase) *operatorsv1alpha1.OperatorVersion {
		return &operatorsv1alpha1.OperatorVersion{Status: operatorsv1alpha1.OperatorVersionStatus{Phase: p}}
	}
	cases := []struct {
		name       string
		ov         *operatorsv1alpha1.OperatorVersion
		replacedBy *operatorsv1alpha1.OperatorVersion
		owned      int
		want       bool
	}{
		{"replaced by a Succeeded version, owns nothing", old, phase(operatorsv1alpha1.PhaseSucceeded), 0, true},
		{"still owns objects (adoption not finished)", old, phase(operatorsv1alpha1.PhaseSucceeded), 3, false},
		{"replacement still installing", old, phase(operatorsv1alpha1.PhaseInstalling), 0, false},
		{"replacement failed: the old version keeps serving", old, phase(operatorsv1alpha1.PhaseFailed), 0, false},
		{"not replaced", old, nil, 0, false},
		{"already being deleted", deleting, phase(operatorsv1alpha1.PhaseSucceeded), 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Collectable(tc.ov, tc.replacedBy, tc.owned); got != tc.want {
				t.Fatalf("Collectable = %v, want %v", got, tc.want)
			}
		})
	}
}
