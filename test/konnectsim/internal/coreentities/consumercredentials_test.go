package coreentities_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha1"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	sdkkonnectgo "github.com/Kong/sdk-konnect-go"
	"github.com/Kong/sdk-konnect-go/models/components"
	"github.com/Kong/sdk-konnect-go/models/operations"
	"github.com/Kong/sdk-konnect-go/models/sdkerrors"

	"github.com/almproject/alm/test/konnectsim"
	"github.com/almproject/alm/test/konnectsim/internal/simtest"
	"github.com/almproject/alm/test/konnectsim/internal/store"
)

func TestConsumerCredentials(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	ctx := context.Background()
	cp := simtest.CreateControlPlane(t, sdk, "cp", nil).ID
	consumer, err := sdk.Consumers.CreateConsumer(ctx, cp, components.Consumer{Username: simtest.Ptr("alice")})
	if err != nil {
		t.Fatal(err)
	}
	cid := *consumer.Consumer.ID

	// basic-auth: the password comes back hashed with the consumer id.
	basic, err := sdk.BasicAuthCredentials.CreateBasicAuthWithConsumer(ctx, operations.CreateBasicAuthWithConsumerRequest{
		ControlPlaneID: cp, ConsumerIDForNestedEntities: cid,
		BasicAuthWithoutParents: components.BasicAuthWithoutParents{Username: "alice", Password: "s3cret", Tags: []string{"team:a"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum([]byte("s3cret" + cid))
	if b := basic.BasicAuth; basic.StatusCode != http.StatusCreated || b.Password != hex.EncodeToString(sum[:]) || b.Consumer == nil || *b.Consumer.ID != cid {
		t.Errorf("basic-auth answer: %d %+v", basic.StatusCode, b)
	}
	// key-auth and jwt fill in what is left out.
	key, err := sdk.APIKeys.CreateKeyAuthWithConsumer(ctx, operations.CreateKeyAuthWithConsumerRequest{
		ControlPlaneID: cp, ConsumerIDForNestedEntities: cid, KeyAuthWithoutParents: &components.KeyAuthWithoutParents{Tags: []string{"team:a"}},
	})
	if err != nil || key.KeyAuth.Key == nil || *key.KeyAuth.Key == "" {
		t.Fatalf("key-auth: %+v, %v", key, err)
	}
	jwt, err := sdk.JWTs.CreateJwtWithConsumer(ctx, operations.CreateJwtWithConsumerRequest{
		ControlPlaneID: cp, ConsumerIDForNestedEntities: cid, JWTWithoutParents: &components.JWTWithoutParents{},
	})
	if err != nil || jwt.Jwt.Key == nil || jwt.Jwt.Secret == nil || jwt.Jwt.Algorithm == nil || *jwt.Jwt.Algorithm != "HS256" {
		t.Fatalf("jwt: %+v, %v", jwt, err)
	}
	hmac, err := sdk.HMACAuthCredentials.CreateHmacAuthWithConsumer(ctx, operations.CreateHmacAuthWithConsumerRequest{
		ControlPlaneID: cp, ConsumerIDForNestedEntities: cid, HMACAuthWithoutParents: components.HMACAuthWithoutParents{Username: "alice-hmac"},
	})
	if err != nil || hmac.HMACAuth.Secret == nil || *hmac.HMACAuth.Secret == "" {
		t.Fatalf("hmac-auth: %+v, %v", hmac, err)
	}
	acl, err := sdk.ACLs.CreateACLWithConsumer(ctx, operations.CreateACLWithConsumerRequest{
		ControlPlaneID: cp, ConsumerIDForNestedEntities: cid, ACLWithoutParents: components.ACLWithoutParents{Group: "admins"},
	})
	if err != nil {
		t.Fatal(err)
	}

	// What Kong refuses.
	rs256 := components.JWTWithoutParentsAlgorithmRs256
	for name, call := range map[string]func() error{
		"duplicate basic-auth username": func() error {
			_, err := sdk.BasicAuthCredentials.CreateBasicAuthWithConsumer(ctx, operations.CreateBasicAuthWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid,
				BasicAuthWithoutParents: components.BasicAuthWithoutParents{Username: "alice", Password: "x"}})
			return err
		},
		"acl without group": func() error {
			_, err := sdk.ACLs.CreateACLWithConsumer(ctx, operations.CreateACLWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid})
			return err
		},
		"RS256 jwt without a public key": func() error {
			_, err := sdk.JWTs.CreateJwtWithConsumer(ctx, operations.CreateJwtWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid,
				JWTWithoutParents: &components.JWTWithoutParents{Algorithm: &rs256}})
			return err
		},
	} {
		if got := simtest.SDKStatus(call()); got != http.StatusBadRequest {
			t.Errorf("%s: HTTP %d, want 400", name, got)
		}
	}
	if _, err := sdk.ACLs.CreateACLWithConsumer(ctx, operations.CreateACLWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: "00000000-0000-4000-8000-000000000000",
		ACLWithoutParents: components.ACLWithoutParents{Group: "g"}}); simtest.SDKStatus(err) != http.StatusNotFound {
		t.Errorf("credential of an unknown consumer: %v, want 404", err)
	}

	// Lists filter by tag and page with offsets.
	size := int64(1)
	tags := "team:a"
	var ids []string
	var offset *string
	for range 5 {
		res, err := sdk.BasicAuthCredentials.ListBasicAuthWithConsumer(ctx, operations.ListBasicAuthWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid, Size: &size, Tags: &tags, Offset: offset})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range res.Object.Data {
			ids = append(ids, *b.ID)
		}
		if offset = res.Object.Offset; offset == nil {
			break
		}
	}
	if len(ids) != 1 || ids[0] != *basic.BasicAuth.ID {
		t.Errorf("basic-auths tagged team:a = %v", ids)
	}

	// PUT replaces; GET and DELETE by id.
	if _, err := sdk.ACLs.UpsertACLWithConsumer(ctx, operations.UpsertACLWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid, ACLID: *acl.ACL.ID,
		ACLWithoutParents: components.ACLWithoutParents{Group: "readers"}}); err != nil {
		t.Fatal(err)
	}
	got, err := sdk.ACLs.GetACLWithConsumer(ctx, operations.GetACLWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid, ACLID: *acl.ACL.ID})
	if err != nil || got.ACL.Group != "readers" {
		t.Errorf("acl after PUT: %+v, %v", got, err)
	}
	if _, err := sdk.ACLs.DeleteACLWithConsumer(ctx, operations.DeleteACLWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid, ACLID: *acl.ACL.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := sdk.ACLs.GetACLWithConsumer(ctx, operations.GetACLWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid, ACLID: *acl.ACL.ID}); simtest.SDKStatus(err) != http.StatusNotFound {
		t.Errorf("deleted acl: %v, want 404", err)
	}

	// Deleting the consumer deletes its credentials.
	if n := len(s.ObjectsOf(konnectsim.KindBasicAuth)) + len(s.ObjectsOf(konnectsim.KindKeyAuth)) + len(s.ObjectsOf(konnectsim.KindJWT)) + len(s.ObjectsOf(konnectsim.KindHMACAuth)); n != 4 {
		t.Errorf("%d credentials stored, want 4", n)
	}
	if _, err := sdk.Consumers.DeleteConsumer(ctx, cp, cid); err != nil {
		t.Fatal(err)
	}
	for _, k := range []konnectsim.Kind{konnectsim.KindBasicAuth, konnectsim.KindKeyAuth, konnectsim.KindACL, konnectsim.KindJWT, konnectsim.KindHMACAuth} {
		if n := len(s.ObjectsOf(k)); n != 0 {
			t.Errorf("%d %s credentials left after their consumer was deleted", n, k)
		}
	}
}

// credentialSetup starts a simulator with one control plane holding consumers with the given usernames.
func credentialSetup(t *testing.T, opts konnectsim.Options, usernames ...string) (*konnectsim.Server, *sdkkonnectgo.SDK, string, []string) {
	t.Helper()
	s := konnectsim.StartTest(t, opts)
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	cp := simtest.CreateControlPlane(t, sdk, "cp", nil).ID
	var ids []string
	for _, u := range usernames {
		res, err := sdk.Consumers.CreateConsumer(context.Background(), cp, components.Consumer{Username: simtest.Ptr(u)})
		if err != nil {
			t.Fatalf("CreateConsumer(%s): %v", u, err)
		}
		ids = append(ids, *res.Consumer.ID)
	}
	return s, sdk, cp, ids
}

// The top-level lists and gets (/core-entities/basic-auths, ...) see the credentials of every consumer.
func TestCredentialsOfEveryConsumer(t *testing.T) {
	s, sdk, cp, consumers := credentialSetup(t, konnectsim.Options{}, "alice", "bob")
	ctx := context.Background()
	var basicIDs, aclIDs []string
	for i, cid := range consumers {
		name := []string{"alice", "bob"}[i]
		tags := []string{"team:" + name}
		b, err := sdk.BasicAuthCredentials.CreateBasicAuthWithConsumer(ctx, operations.CreateBasicAuthWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid,
			BasicAuthWithoutParents: components.BasicAuthWithoutParents{Username: name, Password: "pw", Tags: tags}})
		if err != nil {
			t.Fatal(err)
		}
		basicIDs = append(basicIDs, *b.BasicAuth.ID)
		// The same ACL group for two consumers is fine.
		a, err := sdk.ACLs.CreateACLWithConsumer(ctx, operations.CreateACLWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid,
			ACLWithoutParents: components.ACLWithoutParents{Group: "admins", Tags: tags}})
		if err != nil {
			t.Fatal(err)
		}
		aclIDs = append(aclIDs, *a.ACL.ID)
		if _, err := sdk.APIKeys.CreateKeyAuthWithConsumer(ctx, operations.CreateKeyAuthWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid,
			KeyAuthWithoutParents: &components.KeyAuthWithoutParents{Key: simtest.Ptr("key-" + name), Tags: tags}}); err != nil {
			t.Fatal(err)
		}
		if _, err := sdk.JWTs.CreateJwtWithConsumer(ctx, operations.CreateJwtWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid,
			JWTWithoutParents: &components.JWTWithoutParents{Key: simtest.Ptr("iss-" + name), Tags: tags}}); err != nil {
			t.Fatal(err)
		}
		if _, err := sdk.HMACAuthCredentials.CreateHmacAuthWithConsumer(ctx, operations.CreateHmacAuthWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid,
			HMACAuthWithoutParents: components.HMACAuthWithoutParents{Username: "hmac-" + name, Secret: simtest.Ptr("hmac-secret-" + name), Tags: tags}}); err != nil {
			t.Fatal(err)
		}
	}

	// Pages of one, in creation order, across consumers.
	var ids []string
	var offset *string
	for range 5 {
		res, err := sdk.BasicAuthCredentials.ListBasicAuth(ctx, operations.ListBasicAuthRequest{ControlPlaneID: cp, Size: simtest.Ptr(int64(1)), Offset: offset})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range res.Object.Data {
			ids = append(ids, *b.ID)
			if sum := sha1.Sum([]byte("pw" + *b.Consumer.ID)); b.Password != hex.EncodeToString(sum[:]) {
				t.Errorf("listed password %q is not the salted hash", b.Password)
			}
		}
		if offset = res.Object.Offset; offset == nil {
			break
		}
	}
	if !slices.Equal(ids, basicIDs) {
		t.Errorf("basic-auths over pages of 1 = %v, want %v", ids, basicIDs)
	}
	acls, err := sdk.ACLs.ListACL(ctx, operations.ListACLRequest{ControlPlaneID: cp, Tags: simtest.Ptr("team:bob")})
	if err != nil || len(acls.Object.Data) != 1 || *acls.Object.Data[0].ID != aclIDs[1] || *acls.Object.Data[0].Consumer.ID != consumers[1] {
		t.Errorf("acls tagged team:bob: %+v, %v", acls, err)
	}
	keys, err := sdk.APIKeys.ListKeyAuth(ctx, operations.ListKeyAuthRequest{ControlPlaneID: cp, Tags: simtest.Ptr("team:alice/team:bob")})
	if err != nil || len(keys.Object.Data) != 2 {
		t.Errorf("key-auths tagged team:alice or team:bob: %+v, %v", keys, err)
	}
	jwts, err := sdk.JWTs.ListJwt(ctx, operations.ListJwtRequest{ControlPlaneID: cp, Tags: simtest.Ptr("team:alice,team:bob")})
	if err != nil || len(jwts.Object.Data) != 0 {
		t.Errorf("jwts tagged team:alice and team:bob: %+v, %v", jwts, err)
	}
	hmacs, err := sdk.HMACAuthCredentials.ListHmacAuth(ctx, operations.ListHmacAuthRequest{ControlPlaneID: cp})
	if err != nil || len(hmacs.Object.Data) != 2 || *hmacs.Object.Data[1].Secret != "hmac-secret-bob" {
		t.Errorf("hmac-auths: %+v, %v", hmacs, err)
	}

	// Get by id, or by Kong's endpoint key.
	if got, err := sdk.BasicAuthCredentials.GetBasicAuth(ctx, "bob", cp); err != nil || *got.BasicAuth.ID != basicIDs[1] {
		t.Errorf("GetBasicAuth by username: %+v, %v", got, err)
	}
	if got, err := sdk.ACLs.GetACL(ctx, aclIDs[0], cp); err != nil || got.ACL.Group != "admins" || *got.ACL.Consumer.ID != consumers[0] {
		t.Errorf("GetACL: %+v, %v", got, err)
	}
	if got, err := sdk.APIKeys.GetKeyAuth(ctx, "key-bob", cp); err != nil || *got.KeyAuth.Consumer.ID != consumers[1] {
		t.Errorf("GetKeyAuth by key: %+v, %v", got, err)
	}
	if got, err := sdk.JWTs.GetJwt(ctx, "iss-alice", cp); err != nil || *got.Jwt.Consumer.ID != consumers[0] || *got.Jwt.Algorithm != components.JWTAlgorithmHs256 {
		t.Errorf("GetJwt by key: %+v, %v", got, err)
	}
	if got, err := sdk.HMACAuthCredentials.GetHmacAuth(ctx, "hmac-alice", cp); err != nil || *got.HMACAuth.Secret != "hmac-secret-alice" {
		t.Errorf("GetHmacAuth by username: %+v, %v", got, err)
	}
	// Under a consumer, an ACL's group finds that consumer's ACL.
	if got, err := sdk.ACLs.GetACLWithConsumer(ctx, operations.GetACLWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: "bob", ACLID: "admins"}); err != nil || *got.ACL.ID != aclIDs[1] {
		t.Errorf("bob's acl by group: %+v, %v", got, err)
	}
	// Another consumer's credential is not found under this one.
	if _, err := sdk.BasicAuthCredentials.GetBasicAuthWithConsumer(ctx, operations.GetBasicAuthWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: consumers[0], BasicAuthID: basicIDs[1]}); simtest.SDKStatus(err) != http.StatusNotFound {
		t.Errorf("bob's basic-auth under alice: %v, want 404", err)
	}
	for name, err := range map[string]error{
		"unknown id":            simtest.Err(sdk.BasicAuthCredentials.GetBasicAuth(ctx, "00000000-0000-4000-8000-000000000000", cp)),
		"unknown control plane": simtest.Err(sdk.ACLs.ListACL(ctx, operations.ListACLRequest{ControlPlaneID: "00000000-0000-4000-8000-000000000000"})),
	} {
		var e *sdkerrors.SDKError
		if !errors.As(err, &e) || e.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %v, want an SDKError with 404", name, err)
		}
	}
	if n := s.Count("GET " + konnectsim.PathBasicAuths); n != 2 {
		t.Errorf("GET %s counted %d times, want 2", konnectsim.PathBasicAuths, n)
	}
	if n := s.Count("GET " + konnectsim.PathBasicAuth); n != 2 {
		t.Errorf("GET %s counted %d times, want 2", konnectsim.PathBasicAuth, n)
	}
	// The API has no writes at the top level: the simulator answers like any unknown endpoint.
	if status, _, _ := simtest.RawRequest(t, s, "POST", "/v2/control-planes/"+cp+"/core-entities/acls", konnectsim.DefaultToken, `{"group":"g"}`); status != http.StatusNotFound || s.Count("POST unmatched") != 1 {
		t.Errorf("POST /acls: %d, want 404 (unmatched)", status)
	}
	simtest.ExpectRejected(t, s, 1) // no operation of Konnect's OpenAPI document
}

// What Kong refuses, and what it fills in.
func TestCredentialRules(t *testing.T) {
	s, sdk, cp, consumers := credentialSetup(t, konnectsim.Options{}, "alice", "bob")
	ctx := context.Background()
	alice, bob := consumers[0], consumers[1]
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&ecKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	publicKey := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))

	basic := func(cid, username, password string) error {
		_, err := sdk.BasicAuthCredentials.CreateBasicAuthWithConsumer(ctx, operations.CreateBasicAuthWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid,
			BasicAuthWithoutParents: components.BasicAuthWithoutParents{Username: username, Password: password}})
		return err
	}
	key := func(cid, k string) error {
		_, err := sdk.APIKeys.CreateKeyAuthWithConsumer(ctx, operations.CreateKeyAuthWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid,
			KeyAuthWithoutParents: &components.KeyAuthWithoutParents{Key: simtest.Ptr(k), TTL: simtest.Ptr(int64(3600))}})
		return err
	}
	acl := func(cid, group string) error {
		_, err := sdk.ACLs.CreateACLWithConsumer(ctx, operations.CreateACLWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid,
			ACLWithoutParents: components.ACLWithoutParents{Group: group}})
		return err
	}
	jwt := func(cid string, body components.JWTWithoutParents) error {
		_, err := sdk.JWTs.CreateJwtWithConsumer(ctx, operations.CreateJwtWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid, JWTWithoutParents: &body})
		return err
	}
	hmac := func(cid, username string) error {
		_, err := sdk.HMACAuthCredentials.CreateHmacAuthWithConsumer(ctx, operations.CreateHmacAuthWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid,
			HMACAuthWithoutParents: components.HMACAuthWithoutParents{Username: username}})
		return err
	}
	alg := func(a string) *components.JWTWithoutParentsAlgorithm {
		return simtest.Ptr(components.JWTWithoutParentsAlgorithm(a))
	}
	unknown := "00000000-0000-4000-8000-000000000000"

	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"basic-auth", basic(alice, "alice", "pw"), http.StatusCreated},
		{"key-auth with a ttl", key(alice, "k1"), http.StatusCreated},
		{"acl", acl(alice, "admins"), http.StatusCreated},
		{"the same acl group for another consumer", acl(bob, "admins"), http.StatusCreated},
		{"jwt", jwt(alice, components.JWTWithoutParents{Key: simtest.Ptr("iss")}), http.StatusCreated},
		{"ES256 jwt with a PEM key", jwt(alice, components.JWTWithoutParents{Algorithm: alg("ES256"), RsaPublicKey: &publicKey}), http.StatusCreated},
		{"hmac-auth", hmac(alice, "alice"), http.StatusCreated},

		{"basic-auth without password", basic(alice, "x", ""), http.StatusBadRequest},
		{"basic-auth without username", basic(alice, "", "pw"), http.StatusBadRequest},
		{"basic-auth username taken by another consumer", basic(bob, "alice", "pw"), http.StatusBadRequest},
		{"key-auth key taken", key(bob, "k1"), http.StatusBadRequest},
		{"acl without group", acl(alice, ""), http.StatusBadRequest},
		{"acl group twice for one consumer", acl(alice, "admins"), http.StatusBadRequest},
		{"jwt key taken", jwt(bob, components.JWTWithoutParents{Key: simtest.Ptr("iss")}), http.StatusBadRequest},
		{"jwt with an unknown algorithm", jwt(alice, components.JWTWithoutParents{Algorithm: alg("none")}), http.StatusBadRequest},
		{"RS256 jwt without a key", jwt(alice, components.JWTWithoutParents{Algorithm: alg("RS256")}), http.StatusBadRequest},
		{"PS256 jwt without a key", jwt(alice, components.JWTWithoutParents{Algorithm: alg("PS256")}), http.StatusBadRequest},
		{"EdDSA jwt without a key", jwt(alice, components.JWTWithoutParents{Algorithm: alg("EdDSA")}), http.StatusBadRequest},
		{"ES256 jwt with a key that is not PEM", jwt(alice, components.JWTWithoutParents{Algorithm: alg("ES256"), RsaPublicKey: simtest.Ptr("pem")}), http.StatusBadRequest},
		{"hmac-auth without username", hmac(alice, ""), http.StatusBadRequest},
		{"hmac-auth username taken", hmac(bob, "alice"), http.StatusBadRequest},

		{"basic-auth of an unknown consumer", basic(unknown, "u", "pw"), http.StatusNotFound},
		{"key-auth of an unknown consumer", key(unknown, "k9"), http.StatusNotFound},
		{"jwt of an unknown consumer", jwt(unknown, components.JWTWithoutParents{}), http.StatusNotFound},
		{"hmac-auth of an unknown consumer", hmac(unknown, "u"), http.StatusNotFound},
	} {
		if got := simtest.SDKStatus(tc.err); tc.want == http.StatusCreated && tc.err != nil || tc.want != http.StatusCreated && got != tc.want {
			t.Errorf("%s: %v, want HTTP %d", tc.name, tc.err, tc.want)
		}
	}
	simtest.ExpectRejected(t, s, 1) // the unknown jwt algorithm: the document's enum rejects it
	// A unique violation reads like the other core entities'.
	err = key(bob, "k1")
	var e *sdkerrors.SDKError
	if !errors.As(err, &e) || !strings.Contains(e.Body, `"message":"data constraint error"`) || !strings.Contains(e.Body, "key (type: unique) constraint failed for value 'k1'") {
		t.Errorf("duplicate key answer: %v", err)
	}
	if n := len(s.ObjectsOf(konnectsim.KindJWT)); n != 2 {
		t.Errorf("%d jwts stored, want 2", n)
	}
	for _, o := range s.ObjectsOf(konnectsim.KindKeyAuth) {
		if o.JSON["ttl"] != int64(3600) || o.Name != "k1" {
			t.Errorf("stored key-auth %+v", o)
		}
	}
	// Kong's credentials carry created_at but no updated_at.
	for _, k := range []konnectsim.Kind{konnectsim.KindBasicAuth, konnectsim.KindKeyAuth, konnectsim.KindACL, konnectsim.KindJWT, konnectsim.KindHMACAuth} {
		for _, o := range s.ObjectsOf(k) {
			if _, ok := o.JSON["updated_at"]; ok || o.JSON["created_at"] == nil || o.ControlPlaneID != cp || !simtest.IsUUID(o.ID) {
				t.Errorf("stored %s: %+v", k, o)
			}
		}
	}

	// Options.CoreEntityConflictStatus turns the unique violations into 409s.
	s409, sdk409, cp409, ids := credentialSetup(t, konnectsim.Options{CoreEntityConflictStatus: http.StatusConflict}, "carol")
	for range 2 {
		_, err = sdk409.HMACAuthCredentials.CreateHmacAuthWithConsumer(ctx, operations.CreateHmacAuthWithConsumerRequest{ControlPlaneID: cp409, ConsumerIDForNestedEntities: ids[0],
			HMACAuthWithoutParents: components.HMACAuthWithoutParents{Username: "carol"}})
	}
	if simtest.SDKStatus(err) != http.StatusConflict || len(s409.ObjectsOf(konnectsim.KindHMACAuth)) != 1 {
		t.Errorf("second hmac-auth with one username: %v, want 409", err)
	}
}

func TestCredentialUpsertAndOutOfBandChanges(t *testing.T) {
	s, sdk, cp, consumers := credentialSetup(t, konnectsim.Options{}, "alice")
	ctx := context.Background()
	cid := consumers[0]
	id := "6f1c9a8e-3b2d-4e5f-8a7b-1c2d3e4f5a6b"

	// PUT with a new id creates (200), then replaces: what it leaves out goes.
	created, err := sdk.APIKeys.UpsertKeyAuthWithConsumer(ctx, operations.UpsertKeyAuthWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid, KeyAuthID: id,
		KeyAuthWithoutParents: &components.KeyAuthWithoutParents{Key: simtest.Ptr("k1"), TTL: simtest.Ptr(int64(60)), Tags: []string{"a"}}})
	if err != nil || created.StatusCode != http.StatusOK || *created.KeyAuth.ID != id || *created.KeyAuth.TTL != 60 || *created.KeyAuth.Consumer.ID != cid {
		t.Fatalf("PUT of a new key-auth: %+v, %v", created, err)
	}
	replaced, err := sdk.APIKeys.UpsertKeyAuthWithConsumer(ctx, operations.UpsertKeyAuthWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid, KeyAuthID: id,
		KeyAuthWithoutParents: &components.KeyAuthWithoutParents{Key: simtest.Ptr("k2")}})
	if k := replaced.KeyAuth; err != nil || *k.Key != "k2" || k.TTL != nil || k.Tags != nil || *k.CreatedAt != *created.KeyAuth.CreatedAt {
		t.Fatalf("PUT replacing a key-auth: %+v, %v", replaced, err)
	}
	// A basic-auth PUT hashes the new password.
	basicID := "7a2b3c4d-5e6f-4a1b-9c2d-3e4f5a6b7c8d"
	for _, pw := range []string{"one", "two"} {
		res, err := sdk.BasicAuthCredentials.UpsertBasicAuthWithConsumer(ctx, operations.UpsertBasicAuthWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid, BasicAuthID: basicID,
			BasicAuthWithoutParents: components.BasicAuthWithoutParents{Username: "alice", Password: pw}})
		if sum := sha1.Sum([]byte(pw + cid)); err != nil || res.BasicAuth.Password != hex.EncodeToString(sum[:]) {
			t.Fatalf("PUT basic-auth with password %q: %+v, %v", pw, res, err)
		}
	}
	// jwt and hmac-auth PUTs generate what they leave out, and keep what they are given.
	jwtID := "8b3c4d5e-6f7a-4b2c-8d3e-4f5a6b7c8d9e"
	j, err := sdk.JWTs.UpsertJwtWithConsumer(ctx, operations.UpsertJwtWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid, JWTID: jwtID,
		JWTWithoutParents: &components.JWTWithoutParents{Secret: simtest.Ptr("shh")}})
	if err != nil || len(*j.Jwt.Key) != 32 || *j.Jwt.Secret != "shh" || *j.Jwt.Algorithm != components.JWTAlgorithmHs256 {
		t.Fatalf("PUT jwt: %+v, %v", j, err)
	}
	hmacID := "9c4d5e6f-7a8b-4c3d-9e4f-5a6b7c8d9e0f"
	h, err := sdk.HMACAuthCredentials.UpsertHmacAuthWithConsumer(ctx, operations.UpsertHmacAuthWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid, HMACAuthID: hmacID,
		HMACAuthWithoutParents: components.HMACAuthWithoutParents{Username: "alice"}})
	if err != nil || len(*h.HMACAuth.Secret) != 32 {
		t.Fatalf("PUT hmac-auth: %+v, %v", h, err)
	}
	if _, err := sdk.HMACAuthCredentials.UpsertHmacAuthWithConsumer(ctx, operations.UpsertHmacAuthWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid, HMACAuthID: "not-a-uuid",
		HMACAuthWithoutParents: components.HMACAuthWithoutParents{Username: "x"}}); simtest.SDKStatus(err) != http.StatusBadRequest {
		t.Errorf("PUT with an id that is no UUID: %v, want 400", err)
	}
	if _, err := sdk.JWTs.UpsertJwtWithConsumer(ctx, operations.UpsertJwtWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: "nobody", JWTID: jwtID,
		JWTWithoutParents: &components.JWTWithoutParents{}}); simtest.SDKStatus(err) != http.StatusNotFound {
		t.Errorf("PUT under an unknown consumer: %v, want 404", err)
	}

	// Someone changes the key-auth in the UI, then deletes the jwt.
	if err := s.Edit(id, map[string]any{"tags": []string{"ui"}}); err != nil {
		t.Fatal(err)
	}
	got, err := sdk.APIKeys.GetKeyAuthWithConsumer(ctx, operations.GetKeyAuthWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid, KeyAuthID: id})
	if err != nil || !slices.Equal(got.KeyAuth.Tags, []string{"ui"}) {
		t.Fatalf("key-auth after an out-of-band edit: %+v, %v", got, err)
	}
	if o := s.ObjectsOf(konnectsim.KindKeyAuth); len(o) != 1 || o[0].JSON["updated_at"] != nil {
		t.Errorf("an edit must not give a credential updated_at: %+v", o)
	}
	if err := s.Remove(jwtID); err != nil {
		t.Fatal(err)
	}
	if _, err := sdk.JWTs.GetJwtWithConsumer(ctx, operations.GetJwtWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid, JWTID: jwtID}); simtest.SDKStatus(err) != http.StatusNotFound {
		t.Errorf("jwt removed out of band: %v, want 404", err)
	}
	if _, err := sdk.JWTs.DeleteJwtWithConsumer(ctx, operations.DeleteJwtWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid, JWTID: jwtID}); simtest.SDKStatus(err) != http.StatusNotFound {
		t.Errorf("delete of a removed jwt: %v, want 404", err)
	}
	if res, err := sdk.HMACAuthCredentials.DeleteHmacAuthWithConsumer(ctx, operations.DeleteHmacAuthWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid, HMACAuthID: hmacID}); err != nil || res.StatusCode != http.StatusNoContent {
		t.Errorf("delete hmac-auth: %+v, %v", res, err)
	}
}

func TestCredentialCascades(t *testing.T) {
	s, sdk, cp, consumers := credentialSetup(t, konnectsim.Options{}, "alice", "bob")
	ctx := context.Background()
	for i, cid := range consumers {
		name := []string{"alice", "bob"}[i]
		if _, err := sdk.BasicAuthCredentials.CreateBasicAuthWithConsumer(ctx, operations.CreateBasicAuthWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid,
			BasicAuthWithoutParents: components.BasicAuthWithoutParents{Username: name, Password: "pw"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := sdk.ACLs.CreateACLWithConsumer(ctx, operations.CreateACLWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid,
			ACLWithoutParents: components.ACLWithoutParents{Group: "g"}}); err != nil {
			t.Fatal(err)
		}
	}
	// Deleting alice deletes her credentials only.
	if _, err := sdk.Consumers.DeleteConsumer(ctx, cp, consumers[0]); err != nil {
		t.Fatal(err)
	}
	for _, k := range []konnectsim.Kind{konnectsim.KindBasicAuth, konnectsim.KindACL} {
		if o := s.ObjectsOf(k); len(o) != 1 || store.ParentOf(o[0].JSON, "consumer") != consumers[1] {
			t.Errorf("%s after deleting alice: %+v", k, o)
		}
	}
	if _, err := sdk.BasicAuthCredentials.ListBasicAuthWithConsumer(ctx, operations.ListBasicAuthWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: consumers[0]}); simtest.SDKStatus(err) != http.StatusNotFound {
		t.Errorf("credentials of a deleted consumer: %v, want 404", err)
	}
	// Deleting the control plane deletes everything.
	if _, err := sdk.ControlPlanes.DeleteControlPlane(ctx, cp); err != nil {
		t.Fatal(err)
	}
	if o := s.Objects(); len(o) != 0 {
		t.Errorf("left after deleting the control plane: %+v", o)
	}
}

// Faults, authentication and counters apply to the credential endpoints like to any other.
func TestCredentialKnobs(t *testing.T) {
	s, sdk, cp, consumers := credentialSetup(t, konnectsim.Options{}, "alice")
	ctx := context.Background()
	create := func() (*operations.CreateKeyAuthWithConsumerResponse, error) {
		return sdk.APIKeys.CreateKeyAuthWithConsumer(ctx, operations.CreateKeyAuthWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: consumers[0],
			KeyAuthWithoutParents: &components.KeyAuthWithoutParents{}})
	}
	s.FailNext("POST", konnectsim.PathConsumerKeyAuth, 1, http.StatusServiceUnavailable)
	if _, err := create(); simtest.SDKStatus(err) != http.StatusServiceUnavailable || len(s.ObjectsOf(konnectsim.KindKeyAuth)) != 0 {
		t.Errorf("failed create: %v, %d stored", err, len(s.ObjectsOf(konnectsim.KindKeyAuth)))
	}
	s.LoseNext("POST", konnectsim.PathConsumerKeyAuth, 1)
	if _, err := create(); simtest.SDKStatus(err) != http.StatusBadGateway || len(s.ObjectsOf(konnectsim.KindKeyAuth)) != 1 {
		t.Errorf("lost create: %v, %d stored", err, len(s.ObjectsOf(konnectsim.KindKeyAuth)))
	}
	s.FailNext("GET", konnectsim.PathKeyAuth, 1, 0)
	id := s.ObjectsOf(konnectsim.KindKeyAuth)[0].ID
	if _, err := sdk.APIKeys.GetKeyAuth(ctx, id, cp); simtest.SDKStatus(err) != http.StatusInternalServerError {
		t.Errorf("failed get: %v, want 500", err)
	}
	var unauthorized *sdkerrors.GatewayUnauthorizedError
	if _, err := simtest.NewSDK(s, "kpat_wrong").APIKeys.ListKeyAuth(ctx, operations.ListKeyAuthRequest{ControlPlaneID: cp}); !errors.As(err, &unauthorized) {
		t.Errorf("wrong token: %v, want GatewayUnauthorizedError", err)
	}
	if got := s.Count("POST " + konnectsim.PathConsumerKeyAuth); got != 2 {
		t.Errorf("POST %s counted %d times, want 2", konnectsim.PathConsumerKeyAuth, got)
	}
	if got := s.Count("GET " + konnectsim.PathKeyAuths); got != 1 {
		t.Errorf("GET %s counted %d times, want 1", konnectsim.PathKeyAuths, got)
	}
}
