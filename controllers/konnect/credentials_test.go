package konnect

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/almproject/alm/test/konnectsim"
)

// credentialKinds are the simulator's kind and the field checked of each credential kind.
var credentialKinds = map[string]struct {
	sim   konnectsim.Kind
	field string
}{
	"KongCredentialAPIKey":    {konnectsim.KindKeyAuth, "key"},
	"KongCredentialBasicAuth": {konnectsim.KindBasicAuth, "username"},
	"KongCredentialACL":       {konnectsim.KindACL, "group"},
	"KongCredentialJWT":       {konnectsim.KindJWT, "key"},
	"KongCredentialHMAC":      {konnectsim.KindHMACAuth, "username"},
}

// Kong's sample manifests of the five credential kinds apply unchanged and end Programmed; each credential is in
// Konnect as a credential of its consumer (status.konnect.consumerID is the consumer's ID, controlPlaneID its control
// plane's) with the declared field. Deleting a credential deletes it from Konnect.
func TestKongCredentialManifestsApply(t *testing.T) {
	e := newEnv(t, envOptions{})
	objs := e.applyManifestsAcross("kong-credentials.yaml")
	e.waitProgrammedIn(objs)
	consumers := map[string]*unstructured.Unstructured{}
	var creds []*unstructured.Unstructured
	for _, u := range objs {
		if u.GetKind() == "KongConsumer" {
			consumers[u.GetName()] = u
		}
		if _, ok := credentialKinds[u.GetKind()]; ok {
			creds = append(creds, u)
		}
	}
	if len(creds) != len(credentialKinds) {
		t.Fatalf("%d credentials in the manifests, want one of each of the %d kinds", len(creds), len(credentialKinds))
	}
	for _, u := range creds {
		k := credentialKinds[u.GetKind()]
		got := e.getUnstructured(u)
		id, _, _ := unstructured.NestedString(got.Object, "status", "konnect", "id")
		consumerName, _, _ := unstructured.NestedString(u.Object, "spec", "consumerRef", "name")
		consumer := e.getUnstructured(consumers[consumerName])
		wantConsumer, _, _ := unstructured.NestedString(consumer.Object, "status", "konnect", "id")
		wantCP, _, _ := unstructured.NestedString(consumer.Object, "status", "konnect", "controlPlaneID")
		if c, _, _ := unstructured.NestedString(got.Object, "status", "konnect", "consumerID"); c != wantConsumer || wantConsumer == "" {
			t.Errorf("%s status.konnect.consumerID %q, want the consumer's %q", u.GetKind(), c, wantConsumer)
		}
		if cp, _, _ := unstructured.NestedString(got.Object, "status", "konnect", "controlPlaneID"); cp != wantCP || wantCP == "" {
			t.Errorf("%s status.konnect.controlPlaneID %q, want the consumer's %q", u.GetKind(), cp, wantCP)
		}
		if n := len(e.simByUID(k.sim, got.GetUID())); n != 1 {
			t.Errorf("%s: %d %s credentials of it in Konnect, want 1", u.GetKind(), n, k.sim)
		}
		entity := e.simEntity(k.sim, id)
		if entity == nil {
			t.Errorf("%s: no %s %s in Konnect", u.GetKind(), k.sim, id)
			continue
		}
		if got, want := fmt.Sprint(entity["consumer"]), fmt.Sprint(map[string]any{"id": wantConsumer}); got != want {
			t.Errorf("%s in Konnect: consumer %s, want %s", u.GetKind(), got, want)
		}
		if want, _, _ := unstructured.NestedString(u.Object, "spec", k.field); entity[k.field] != want {
			t.Errorf("%s in Konnect: %s %v, want %q", u.GetKind(), k.field, entity[k.field], want)
		}
	}
	ids := map[string]string{}
	for _, u := range creds {
		got := e.getUnstructured(u)
		ids[u.GetKind()], _, _ = unstructured.NestedString(got.Object, "status", "konnect", "id")
		if err := e.c.Delete(e.ctx, got); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range creds {
		k := credentialKinds[u.GetKind()]
		e.waitGone(u.DeepCopy(), u.GetName())
		if e.simEntity(k.sim, ids[u.GetKind()]) != nil || len(e.simByUID(k.sim, u.GetUID())) != 0 {
			t.Errorf("%s is gone but its %s credential %s is still in Konnect", u.GetKind(), k.sim, ids[u.GetKind()])
		}
	}
}

// getUnstructured reads the object of u's kind, namespace and name.
func (e *env) getUnstructured(u *unstructured.Unstructured) *unstructured.Unstructured {
	e.t.Helper()
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(u.GroupVersionKind())
	if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(u), got); err != nil {
		e.t.Fatal(err)
	}
	return got
}
