package requirements

import (
	"testing"

	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

func TestGVK(t *testing.T) {
	got := GVK("etcdclusters.etcd.database.coreos.com", "v1beta2", "EtcdCluster")
	if want := (schema.GroupVersionKind{Group: "etcd.database.coreos.com", Version: "v1beta2", Kind: "EtcdCluster"}); got != want {
		t.Fatalf("GVK = %v, want %v", got, want)
	}
}

func TestPending(t *testing.T) {
	withReq := func(phase operatorsv1alpha1.OperatorVersionPhase, reason string) *operatorsv1alpha1.OperatorVersion {
		ov := &operatorsv1alpha1.OperatorVersion{Status: operatorsv1alpha1.OperatorVersionStatus{Phase: phase, Reason: reason}}
		ov.Spec.CustomResourceDefinitions.Required = []opv1alpha1.CRDDescription{{Name: "widgets.example.com", Version: "v1", Kind: "Widget"}}
		ov.Spec.Bundle = &operatorsv1alpha1.BundleReference{Digest: "sha256:0000000000000000000000000000000000000000000000000000000000000000"}
		return ov
	}
	unrecorded := withReq("", "")
	unrecorded.Spec.Bundle = nil
	cases := []struct {
		name string
		ov   *operatorsv1alpha1.OperatorVersion
		want bool
	}{
		{"new", withReq("", ""), true},
		{"Pending", withReq(operatorsv1alpha1.PhasePending, operatorsv1alpha1.ReasonRequirementMissing), true},
		{"Failed waiting for a requirement", withReq(operatorsv1alpha1.PhaseFailed, operatorsv1alpha1.ReasonRequirementMissing), true},
		{"Failed for another reason", withReq(operatorsv1alpha1.PhaseFailed, operatorsv1alpha1.ReasonInstallTimeout), false},
		{"Installing", withReq(operatorsv1alpha1.PhaseInstalling, ""), false},
		{"no requirements", &operatorsv1alpha1.OperatorVersion{}, false},
		// Written by hand: nothing of it is installed, so nothing is created for it.
		{"no spec.bundle", unrecorded, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Pending(tc.ov); got != tc.want {
				t.Fatalf("Pending = %v, want %v", got, tc.want)
			}
		})
	}
}
