package konnectsim

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"net/http"
	"testing"

	"github.com/Kong/sdk-konnect-go/models/components"
	"github.com/Kong/sdk-konnect-go/models/operations"
)

func TestConsumerCredentials(t *testing.T) {
	s := startServer(t, Options{})
	sdk := newSDK(s, DefaultToken)
	ctx := context.Background()
	cp := createControlPlane(t, sdk, "cp", nil).ID
	consumer, err := sdk.Consumers.CreateConsumer(ctx, cp, components.Consumer{Username: ptr("alice")})
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
		if got := sdkStatus(call()); got != http.StatusBadRequest {
			t.Errorf("%s: HTTP %d, want 400", name, got)
		}
	}
	if _, err := sdk.ACLs.CreateACLWithConsumer(ctx, operations.CreateACLWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: "00000000-0000-4000-8000-000000000000",
		ACLWithoutParents: components.ACLWithoutParents{Group: "g"}}); sdkStatus(err) != http.StatusNotFound {
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
	if _, err := sdk.ACLs.GetACLWithConsumer(ctx, operations.GetACLWithConsumerRequest{ControlPlaneID: cp, ConsumerIDForNestedEntities: cid, ACLID: *acl.ACL.ID}); sdkStatus(err) != http.StatusNotFound {
		t.Errorf("deleted acl: %v, want 404", err)
	}

	// Deleting the consumer deletes its credentials.
	if n := len(s.ObjectsOf(KindBasicAuth)) + len(s.ObjectsOf(KindKeyAuth)) + len(s.ObjectsOf(KindJWT)) + len(s.ObjectsOf(KindHMACAuth)); n != 4 {
		t.Errorf("%d credentials stored, want 4", n)
	}
	if _, err := sdk.Consumers.DeleteConsumer(ctx, cp, cid); err != nil {
		t.Fatal(err)
	}
	for _, k := range []Kind{KindBasicAuth, KindKeyAuth, KindACL, KindJWT, KindHMACAuth} {
		if n := len(s.ObjectsOf(k)); n != 0 {
			t.Errorf("%d %s credentials left after their consumer was deleted", n, k)
		}
	}
}
