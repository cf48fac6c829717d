package keys

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
)

func cpRef(name string) *configurationv1alpha1.ControlPlaneRef {
	return &configurationv1alpha1.ControlPlaneRef{Type: configurationv1alpha1.ControlPlaneRefKonnectNamespacedRef,
		KonnectNamespacedRef: &configurationv1alpha1.KonnectNamespacedRef{Name: name}}
}

// world is a usable control plane cp (with its auth configuration) and key sets in cp and in other-cp.
func world(t *testing.T) client.Client {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, configurationv1alpha1.AddToScheme, konnectv1alpha1.AddToScheme, konnectv1alpha2.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	auth := &konnectv1alpha1.KonnectAPIAuthConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "auth", Namespace: "ns"}}
	auth.Status.OrganizationID = "org"
	auth.Status.Conditions = []metav1.Condition{{Type: konnectv1alpha1.ConditionAPIAuthValid, Status: metav1.ConditionTrue, Reason: "Valid", LastTransitionTime: metav1.Now()}}
	cp := &konnectv1alpha2.KonnectGatewayControlPlane{ObjectMeta: metav1.ObjectMeta{Name: "cp", Namespace: "ns"}}
	cp.Spec.KonnectConfiguration.APIAuthConfigurationRef.Name = "auth"
	cp.Status.ID = "cp-id"
	set := func(name, cpName string) *configurationv1alpha1.KongKeySet {
		ks := &configurationv1alpha1.KongKeySet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Spec: configurationv1alpha1.KongKeySetSpec{ControlPlaneRef: cpRef(cpName)}}
		ks.Status.Konnect = &configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef{}
		ks.Status.Konnect.ID = name + "-id"
		return ks
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(auth, cp, set("here", "cp"), set("there", "other-cp")).
		WithStatusSubresource(auth, cp).Build()
}

// A key in a KongKeySet of its own control plane is placed in it; one whose key set is in another control plane is
// refused before its control plane is even looked at; a key set named by Konnect ID is taken as it is.
func TestResolveKey(t *testing.T) {
	c := world(t)
	key := func(ref *configurationv1alpha1.KeySetRef) *configurationv1alpha1.KongKey {
		return &configurationv1alpha1.KongKey{ObjectMeta: metav1.ObjectMeta{Name: "k", Namespace: "ns"},
			Spec: configurationv1alpha1.KongKeySpec{ControlPlaneRef: cpRef("cp"), KeySetRef: ref}}
	}
	named := func(name string) *configurationv1alpha1.KeySetRef {
		return &configurationv1alpha1.KeySetRef{Type: configurationv1alpha1.KeySetRefNamespacedRef, NamespacedRef: &configurationv1alpha1.ObjectNameRef{Name: name}}
	}
	byID := "5f9fd312-a987-4628-b4c5-bb4f4fddd5f7"
	for _, tc := range []struct {
		name       string
		ref        *configurationv1alpha1.KeySetRef
		wantParent string
		wantOK     bool
		wantChecks int
	}{
		{"in a set of its control plane", named("here"), "here-id", true, 3},
		{"in a set of another control plane", named("there"), "", false, 1},
		{"in a missing set", named("gone"), "", false, 1},
		{"in a set named by ID", &configurationv1alpha1.KeySetRef{Type: configurationv1alpha1.KeySetRefKonnectID, KonnectID: &byID}, byID, true, 3},
		{"in no set", nil, "", true, 3},
	} {
		refs, checks, err := resolveKey(context.Background(), c, key(tc.ref))
		ok := err == nil && len(checks) > 0
		for _, ch := range checks {
			ok = ok && (ch.OK || ch.Absent)
		}
		if ok != tc.wantOK || refs.ParentID != tc.wantParent || len(checks) != tc.wantChecks {
			t.Errorf("%s: parent %q checks %+v err %v; want ok %v parent %q and %d checks", tc.name, refs.ParentID, checks, err, tc.wantOK, tc.wantParent, tc.wantChecks)
		}
		if tc.wantOK && refs.ControlPlaneID != "cp-id" {
			t.Errorf("%s: control plane %q, want cp-id", tc.name, refs.ControlPlaneID)
		}
	}
}
