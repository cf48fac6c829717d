package upgradetrigger

import (
	"testing"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

func TestApproved(t *testing.T) {
	at := func(approval operatorsv1alpha1.Approval, approved string) *operatorsv1alpha1.AppType {
		return &operatorsv1alpha1.AppType{Spec: operatorsv1alpha1.AppTypeSpec{Approval: approval, ApprovedVersion: approved}}
	}
	cases := []struct {
		name string
		at   *operatorsv1alpha1.AppType
		want bool
	}{
		{"Automatic", at(operatorsv1alpha1.ApprovalAutomatic, ""), true},
		{"defaulted (empty) approval", at("", ""), true},
		{"Manual without approval", at(operatorsv1alpha1.ApprovalManual, ""), false},
		{"Manual approving another version", at(operatorsv1alpha1.ApprovalManual, "1.5.0"), false},
		{"Manual approving this version", at(operatorsv1alpha1.ApprovalManual, "2.0.0"), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Approved(tc.at, "2.0.0"); got != tc.want {
				t.Fatalf("Approved = %v, want %v", got, tc.want)
			}
		})
	}
}
