package registry

import (
	"testing"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

func TestExcluded(t *testing.T) {
	rolledBack := []operatorsv1alpha1.RolledBackVersion{{Name: "p.v2.0.0", Version: "2.0.0", Reason: "p.v2.0.0 was not available"}}
	cases := []struct {
		name string
		spec operatorsv1alpha1.AppTypeSpec
		list []operatorsv1alpha1.RolledBackVersion
		want map[string]string
	}{
		{name: "nothing rolled back"},
		{name: "a rolled back version is excluded with why", list: rolledBack,
			want: map[string]string{"p.v2.0.0": "rolled back: p.v2.0.0 was not available"}},
		{name: "approving it (Manual) offers it again", list: rolledBack,
			spec: operatorsv1alpha1.AppTypeSpec{Approval: operatorsv1alpha1.ApprovalManual, ApprovedVersion: "2.0.0"}},
		{name: "approving another version does not", list: rolledBack,
			spec: operatorsv1alpha1.AppTypeSpec{Approval: operatorsv1alpha1.ApprovalManual, ApprovedVersion: "2.0.1"},
			want: map[string]string{"p.v2.0.0": "rolled back: p.v2.0.0 was not available"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			at := &operatorsv1alpha1.AppType{Spec: tc.spec, Status: operatorsv1alpha1.AppTypeStatus{RolledBack: tc.list}}
			got := Excluded(at)
			if len(got) != len(tc.want) {
				t.Fatalf("Excluded = %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("Excluded[%s] = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}
