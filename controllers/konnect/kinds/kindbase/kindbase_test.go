package kindbase

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
)

var upstreamParent = Parent[*configurationv1alpha1.KongUpstream]{
	Kind: "KongUpstream", Condition: "KongUpstreamRefValid",
	New: func() *configurationv1alpha1.KongUpstream { return &configurationv1alpha1.KongUpstream{} },
	Konnect: func(u *configurationv1alpha1.KongUpstream) *configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef {
		return u.Status.Konnect
	},
}

// A parent is valid only when it exists in Konnect and is not being deleted; the message names it.
func TestParentRead(t *testing.T) {
	s := runtime.NewScheme()
	if err := configurationv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	inKonnect := &configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef{}
	inKonnect.ID = "u-id"
	up := func(name string, konnect *configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef, deleting bool) client.Object {
		u := &configurationv1alpha1.KongUpstream{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Status: configurationv1alpha1.KongUpstreamStatus{Konnect: konnect}}
		if deleting {
			u.DeletionTimestamp, u.Finalizers = &now, []string{"x"}
		}
		return u
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(up("ready", inKonnect, false), up("new", nil, false), up("going", inKonnect, true)).Build()
	for _, tc := range []struct {
		name, wantID, wantMessage string
		ok                        bool
	}{
		{"ready", "u-id", "KongUpstream ns/ready exists in Konnect", true},
		{"new", "", "KongUpstream ns/new does not exist in Konnect yet (or is being deleted)", false},
		{"going", "", "KongUpstream ns/going does not exist in Konnect yet (or is being deleted)", false},
		{"missing", "", "KongUpstream ns/missing not found", false},
	} {
		_, id, check, err := upstreamParent.Read(context.Background(), c, "ns", tc.name)
		if err != nil || id != tc.wantID || check.OK != tc.ok || check.Message != tc.wantMessage || check.Type != "KongUpstreamRefValid" {
			t.Errorf("%s: id %q check %+v err %v; want id %q ok %v message %q", tc.name, id, check, err, tc.wantID, tc.ok, tc.wantMessage)
		}
	}
}
