package konnect

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
	"github.com/almproject/alm/test/konnectsim"
)

// TestClientOperations drives the operator's Konnect client (konnectapi, as the reconcilers get it from the
// ClientFactory) through the calls the reconciler tests leave out — reading one entity back by ID for spec.adopt,
// the full life of every kind of credential, replacing a consumer group, a data plane certificate's update — so that
// every operation the operator calls (docs/konnect-operations.md) is exercised and spec-checked in this package
// (TestMain checks it after a full run). The simulator fails the test on anything Kong's OpenAPI document rejects.
func TestClientOperations(t *testing.T) {
	sim := konnectsim.StartTest(t, konnectsim.Options{})
	auth := &konnectv1alpha1.KonnectAPIAuthConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "ops", UID: "ops-uid"},
		Spec: konnectv1alpha1.KonnectAPIAuthConfigurationSpec{Type: konnectv1alpha1.KonnectAPIAuthTypeToken,
			Token: konnectsim.DefaultToken, ServerURL: sim.URL()},
	}
	api, _, err := konnectapi.NewClientFactory(nil, 0).API(t.Context(), auth)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	create := func(typ konnectapi.EntityType, cpID string, body map[string]any) string {
		t.Helper()
		e, err := api.Create(ctx, typ, cpID, body)
		must("create "+string(typ), err)
		return e.ID
	}
	cp := create(konnectapi.TypeControlPlane, "", map[string]any{"name": "ops"})
	svc := create(konnectapi.TypeService, cp, map[string]any{"name": "svc", "host": "svc.example.com"})
	ids := map[konnectapi.EntityType]string{
		konnectapi.TypeService:       svc,
		konnectapi.TypeRoute:         create(konnectapi.TypeRoute, cp, map[string]any{"name": "route", "paths": []any{"/"}, "service": map[string]any{"id": svc}}),
		konnectapi.TypeConsumer:      create(konnectapi.TypeConsumer, cp, map[string]any{"username": "alice"}),
		konnectapi.TypeConsumerGroup: create(konnectapi.TypeConsumerGroup, cp, map[string]any{"name": "gold"}),
	}
	for typ, id := range ids { // spec.adopt reads an entity by ID
		got, err := api.Get(ctx, typ, cp, id)
		must("get "+string(typ), err)
		if got.ID != id {
			t.Errorf("get %s %s: got %s", typ, id, got.ID)
		}
	}
	_, err = api.Update(ctx, konnectapi.TypeConsumerGroup, cp, ids[konnectapi.TypeConsumerGroup], map[string]any{"name": "gold", "tags": []any{"tier"}})
	must("update consumer group", err)

	consumer := ids[konnectapi.TypeConsumer]
	_, publicKey := konnectsim.TestKeyPair()
	for typ, body := range map[konnectapi.CredentialType]map[string]any{
		konnectapi.CredentialBasicAuth: {"username": "alice", "password": "pw"},
		konnectapi.CredentialKeyAuth:   {"key": "alice-key"},
		konnectapi.CredentialACL:       {"group": "admins"},
		konnectapi.CredentialJWT:       {"key": "alice-iss", "algorithm": "RS256", "rsa_public_key": publicKey},
		konnectapi.CredentialHMACAuth:  {"username": "alice-hmac"},
	} {
		id, err := api.CreateCredential(ctx, typ, cp, consumer, body)
		must("create "+string(typ), err)
		body["tags"] = []any{"k8s-uid:ops"}
		must("update "+string(typ), api.UpdateCredential(ctx, typ, cp, consumer, id, body))
		listed, err := api.Credentials(ctx, typ, cp, consumer, "k8s-uid:ops")
		must("list "+string(typ), err)
		if len(listed) != 1 || listed[0].ID != id {
			t.Errorf("%s credentials tagged k8s-uid:ops: %v, want %s", typ, listed, id)
		}
		must("delete "+string(typ), api.DeleteCredential(ctx, typ, cp, consumer, id))
	}

	cert, _ := konnectsim.TestCertificate("dp.example.com", false)
	other, _ := konnectsim.TestCertificate("dp2.example.com", false)
	dp := create(konnectapi.TypeDataPlaneCertificate, cp, map[string]any{"cert": cert})
	_, err = api.Update(ctx, konnectapi.TypeDataPlaneCertificate, cp, dp, map[string]any{"cert": other})
	must("update data plane certificate", err)
	must("delete data plane certificate", api.Delete(ctx, konnectapi.TypeDataPlaneCertificate, cp, dp))
}
