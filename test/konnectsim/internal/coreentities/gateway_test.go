package coreentities_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	sdkkonnectgo "github.com/Kong/sdk-konnect-go"
	"github.com/Kong/sdk-konnect-go/models/components"
	"github.com/Kong/sdk-konnect-go/models/operations"

	"github.com/almproject/alm/test/konnectsim"
	"github.com/almproject/alm/test/konnectsim/internal/simtest"
)

const unknownID = "5f9fd312-a987-4628-b4c5-bb4f4fddd5f7"

// wantBadRequest fails unless err is a 400 whose body says want.
func wantBadRequest(t *testing.T, what string, err error, want string) {
	t.Helper()
	if simtest.SDKStatus(err) != http.StatusBadRequest || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: err %v, want 400 with %q", what, err, want)
	}
}

// Upstreams and targets through the SDK: a target needs its upstream, is unique in it, is listed per control plane
// by tag, and goes with its upstream.
func TestUpstreamsAndTargets(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	ctx := context.Background()
	cp := simtest.CreateControlPlane(t, sdk, "cp", nil).ID
	up, err := sdk.Upstreams.CreateUpstream(ctx, cp, components.Upstream{Name: "backend.internal", Tags: []string{"k8s-uid:u"}})
	if err != nil || up.Upstream.Slots == nil || *up.Upstream.Slots != 10000 || *up.Upstream.Algorithm != components.UpstreamAlgorithmRoundRobin {
		t.Fatalf("create upstream: %v; want defaults filled in", err)
	}
	upID := *up.Upstream.ID
	target := func(addr string) components.TargetWithoutParents {
		return components.TargetWithoutParents{Target: simtest.Ptr(addr), Tags: []string{"k8s-uid:t"}}
	}
	created, err := sdk.Targets.CreateTargetWithUpstream(ctx, operations.CreateTargetWithUpstreamRequest{ControlPlaneID: cp, UpstreamIDForTarget: upID, TargetWithoutParents: target("10.0.0.1:80")})
	if err != nil || *created.Target.Weight != 100 || *created.Target.Upstream.ID != upID {
		t.Fatalf("create target: %v", err)
	}
	_, err = sdk.Targets.CreateTargetWithUpstream(ctx, operations.CreateTargetWithUpstreamRequest{ControlPlaneID: cp, UpstreamIDForTarget: upID, TargetWithoutParents: target("10.0.0.1:80")})
	wantBadRequest(t, "same target twice", err, "data constraint error")
	_, err = sdk.Targets.CreateTargetWithUpstream(ctx, operations.CreateTargetWithUpstreamRequest{ControlPlaneID: cp, UpstreamIDForTarget: unknownID, TargetWithoutParents: target("10.0.0.2:80")})
	if simtest.SDKStatus(err) != http.StatusNotFound {
		t.Errorf("target of an unknown upstream: %v, want 404", err)
	}
	list, err := sdk.Targets.ListTargets(ctx, operations.ListTargetsRequest{ControlPlaneID: cp, Tags: simtest.Ptr("k8s-uid:t")})
	if err != nil || len(list.ListTargets.Data) != 1 {
		t.Fatalf("list targets by tag: %v", err)
	}
	if _, err := sdk.Upstreams.DeleteUpstream(ctx, cp, upID); err != nil {
		t.Fatal(err)
	}
	if n := len(s.ObjectsOf(konnectsim.KindTarget)); n != 0 {
		t.Errorf("%d targets left after their upstream was deleted", n)
	}
}

// Certificates, SNIs and CA certificates through the SDK: PEM that parses and matches, unique SNI names of an
// existing certificate, SNIs going with their certificate.
func TestCertificatesAndSNIs(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	ctx := context.Background()
	cp := simtest.CreateControlPlane(t, sdk, "cp", nil).ID
	cert, key := konnectsim.TestCertificate("example.com", false)
	_, otherKey := konnectsim.TestCertificate("other.com", false)

	_, err := sdk.Certificates.CreateCertificate(ctx, cp, certRequest("not a certificate", key))
	wantBadRequest(t, "non-PEM certificate", err, "invalid certificate")
	_, err = sdk.Certificates.CreateCertificate(ctx, cp, certRequest(cert, "-----BEGIN PRIVATE KEY-----\nbm9wZQ==\n-----END PRIVATE KEY-----\n"))
	wantBadRequest(t, "broken key", err, "invalid key")
	_, err = sdk.Certificates.CreateCertificate(ctx, cp, certRequest(cert, otherKey))
	wantBadRequest(t, "key of another certificate", err, "certificate does not match key")
	created, err := sdk.Certificates.CreateCertificate(ctx, cp, certRequest(cert, key))
	if err != nil {
		t.Fatalf("create certificate: %v", err)
	}
	certID := *created.Certificate.ID

	sni := func(name, certID string) components.Sni {
		return components.Sni{Name: name, Certificate: components.SNICertificate{ID: simtest.Ptr(certID)}}
	}
	if _, err := sdk.SNIs.CreateSni(ctx, cp, sni("*.example.com", certID)); err != nil {
		t.Fatalf("create SNI: %v", err)
	}
	_, err = sdk.SNIs.CreateSni(ctx, cp, sni("*.example.com", certID))
	wantBadRequest(t, "same SNI twice", err, "data constraint error")
	_, err = sdk.SNIs.CreateSni(ctx, cp, sni("api.example.com", unknownID))
	wantBadRequest(t, "SNI of an unknown certificate", err, "no such entry in 'certificate'")
	_, err = sdk.SNIs.CreateSni(ctx, cp, sni("bad name!", certID))
	wantBadRequest(t, "SNI that is no host name", err, "invalid value")
	if _, err := sdk.Certificates.DeleteCertificate(ctx, cp, certID); err != nil {
		t.Fatal(err)
	}
	if n := len(s.ObjectsOf(konnectsim.KindSNI)); n != 0 {
		t.Errorf("%d SNIs left after their certificate was deleted", n)
	}

	ca, _ := konnectsim.TestCertificate("ca", true)
	if _, err := sdk.CACertificates.CreateCaCertificate(ctx, cp, components.CACertificate{Cert: ca}); err != nil {
		t.Fatalf("create CA certificate: %v", err)
	}
	_, err = sdk.CACertificates.CreateCaCertificate(ctx, cp, components.CACertificate{Cert: ca})
	wantBadRequest(t, "same CA certificate twice", err, "data constraint error")
	_, err = sdk.CACertificates.CreateCaCertificate(ctx, cp, components.CACertificate{Cert: cert})
	wantBadRequest(t, "CA certificate that is no CA", err, "basic constraint")
}

// Keys and key sets through the SDK: a key's set must exist, its JWK's kid is its own, its PEM parses; keys go
// with their set.
func TestKeysAndKeySets(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	ctx := context.Background()
	cp := simtest.CreateControlPlane(t, sdk, "cp", nil).ID
	set, err := sdk.KeySets.CreateKeySet(ctx, cp, &components.KeySet{Name: simtest.Ptr("set")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = sdk.KeySets.CreateKeySet(ctx, cp, &components.KeySet{Name: simtest.Ptr("set")})
	wantBadRequest(t, "same key set twice", err, "data constraint error")
	priv, pub := konnectsim.TestKeyPair()
	key := func(kid, setID string) components.Key {
		k := components.Key{Kid: kid, Pem: &components.Pem{PrivateKey: &priv, PublicKey: &pub}}
		if setID != "" {
			k.Set = &components.Set{ID: &setID}
		}
		return k
	}
	if _, err := sdk.Keys.CreateKey(ctx, cp, key("k1", *set.KeySet.ID)); err != nil {
		t.Fatalf("create key: %v", err)
	}
	_, err = sdk.Keys.CreateKey(ctx, cp, key("k2", unknownID))
	wantBadRequest(t, "key in an unknown set", err, "no such entry in 'key_sets'")
	_, err = sdk.Keys.CreateKey(ctx, cp, components.Key{Kid: "k3", Jwk: simtest.Ptr(`{"kid":"other"}`)})
	wantBadRequest(t, "JWK of another kid", err, "kid in jwk.kid must be equal to keys.kid")
	_, err = sdk.Keys.CreateKey(ctx, cp, components.Key{Kid: "k4", Pem: &components.Pem{PrivateKey: simtest.Ptr("nope"), PublicKey: &pub}})
	wantBadRequest(t, "PEM that does not parse", err, "invalid pem format")
	_, err = sdk.Keys.CreateKey(ctx, cp, components.Key{Kid: "k5"})
	wantBadRequest(t, "neither JWK nor PEM", err, "'jwk', 'pem'")
	if _, err := sdk.KeySets.DeleteKeySet(ctx, cp, *set.KeySet.ID); err != nil {
		t.Fatal(err)
	}
	if n := len(s.ObjectsOf(konnectsim.KindKey)); n != 0 {
		t.Errorf("%d keys left after their set was deleted", n)
	}
}

// Vaults and data plane client certificates through the SDK.
func TestVaultsAndDataPlaneCertificates(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	ctx := context.Background()
	cp := simtest.CreateControlPlane(t, sdk, "cp", nil).ID
	if _, err := sdk.Vaults.CreateVault(ctx, cp, components.Vault{Name: "env", Prefix: "env-vault", Config: map[string]any{"prefix": "app_"}}); err != nil {
		t.Fatalf("create vault: %v", err)
	}
	_, err := sdk.Vaults.CreateVault(ctx, cp, components.Vault{Name: "env", Prefix: "env-vault"})
	wantBadRequest(t, "same prefix twice", err, "data constraint error")
	_, err = sdk.Vaults.CreateVault(ctx, cp, components.Vault{Name: "no-such-backend", Prefix: "x"})
	wantBadRequest(t, "unknown backend", err, "is not installed")
	dpCertificates(t, sdk, cp)
}

func dpCertificates(t *testing.T, sdk *sdkkonnectgo.SDK, cp string) {
	ctx := context.Background()
	cert, _ := konnectsim.TestCertificate("dp", false)
	created, err := sdk.DPCertificates.CreateDataplaneCertificate(ctx, cp, &components.DataPlaneClientCertificateRequest{Cert: cert})
	if err != nil || created.DataPlaneClientCertificateResponse.Item == nil {
		t.Fatalf("create data plane certificate: %v", err)
	}
	_, err = sdk.DPCertificates.CreateDataplaneCertificate(ctx, cp, &components.DataPlaneClientCertificateRequest{Cert: "not PEM"})
	if simtest.SDKStatus(err) != http.StatusBadRequest {
		t.Errorf("non-PEM data plane certificate: %v, want 400", err)
	}
	list, err := sdk.DPCertificates.ListDpClientCertificates(ctx, cp)
	if err != nil || len(list.ListDataPlaneCertificatesResponse.Items) != 1 {
		t.Fatalf("list data plane certificates: %v", err)
	}
	id := *created.DataPlaneClientCertificateResponse.Item.ID
	other, _ := konnectsim.TestCertificate("dp2", false)
	updated, err := sdk.DPCertificates.UpdateDataplaneCertificate(ctx, operations.UpdateDataplaneCertificateRequest{ControlPlaneID: cp, CertificateID: id,
		DataPlaneClientCertificateRequest: &components.DataPlaneClientCertificateRequest{Cert: other}})
	if err != nil || *updated.DataPlaneClientCertificateResponse.Item.Cert != other {
		t.Fatalf("update data plane certificate: %v", err)
	}
	if _, err := sdk.DPCertificates.DeleteDataplaneCertificate(ctx, cp, id); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"get":    simtest.Err(sdk.DPCertificates.GetDataplaneCertificate(ctx, cp, id)),
		"delete": simtest.Err(sdk.DPCertificates.DeleteDataplaneCertificate(ctx, cp, id)),
		"update": simtest.Err(sdk.DPCertificates.UpdateDataplaneCertificate(ctx, operations.UpdateDataplaneCertificateRequest{ControlPlaneID: cp, CertificateID: id,
			DataPlaneClientCertificateRequest: &components.DataPlaneClientCertificateRequest{Cert: other}})),
	} {
		if simtest.SDKStatus(err) != http.StatusNotFound {
			t.Errorf("%s of a deleted data plane certificate: %v, want 404", name, err)
		}
	}
}

func certRequest(cert, key string) components.CertificateRequest {
	return components.CreateCertificateRequestCertificateRequest2(components.CertificateRequest2{Cert: cert, Key: key})
}
