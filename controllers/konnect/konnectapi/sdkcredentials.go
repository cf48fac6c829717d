package konnectapi

import (
	"context"
	"fmt"

	"github.com/Kong/sdk-konnect-go/models/components"
	"github.com/Kong/sdk-konnect-go/models/operations"
)

// Consumer credentials through the SDK: one service per credential type, each with the same five calls.

func (a *sdkAPI) Credentials(ctx context.Context, t CredentialType, cpID, consumerID, tag string) ([]Entity, error) {
	var out []Entity
	err := a.call(ctx, "list "+string(t)+" credentials", func(ctx context.Context) error {
		var err error
		out, err = allPages(tag, func(size int64, tags, offset *string) ([]any, *string, error) {
			return a.credentialPage(ctx, t, cpID, consumerID, size, tags, offset)
		})
		return err
	})
	return out, err
}

func (a *sdkAPI) credentialPage(ctx context.Context, t CredentialType, cpID, consumerID string, size int64, tags, offset *string) ([]any, *string, error) {
	switch t {
	case CredentialBasicAuth:
		resp, err := a.sdk.BasicAuthCredentials.ListBasicAuthWithConsumer(ctx, operations.ListBasicAuthWithConsumerRequest{
			ControlPlaneID: cpID, ConsumerIDForNestedEntities: consumerID, Size: &size, Tags: tags, Offset: offset})
		if err != nil || resp.Object == nil {
			return nil, nil, err
		}
		return anyPage(resp.Object.Data, resp.Object.Offset)
	case CredentialKeyAuth:
		resp, err := a.sdk.APIKeys.ListKeyAuthWithConsumer(ctx, operations.ListKeyAuthWithConsumerRequest{
			ControlPlaneID: cpID, ConsumerIDForNestedEntities: consumerID, Size: &size, Tags: tags, Offset: offset})
		if err != nil || resp.Object == nil {
			return nil, nil, err
		}
		return anyPage(resp.Object.Data, resp.Object.Offset)
	case CredentialACL:
		resp, err := a.sdk.ACLs.ListACLWithConsumer(ctx, operations.ListACLWithConsumerRequest{
			ControlPlaneID: cpID, ConsumerIDForNestedEntities: consumerID, Size: &size, Tags: tags, Offset: offset})
		if err != nil || resp.Object == nil {
			return nil, nil, err
		}
		return anyPage(resp.Object.Data, resp.Object.Offset)
	case CredentialJWT:
		resp, err := a.sdk.JWTs.ListJwtWithConsumer(ctx, operations.ListJwtWithConsumerRequest{
			ControlPlaneID: cpID, ConsumerIDForNestedEntities: consumerID, Size: &size, Tags: tags, Offset: offset})
		if err != nil || resp.Object == nil {
			return nil, nil, err
		}
		return anyPage(resp.Object.Data, resp.Object.Offset)
	case CredentialHMACAuth:
		resp, err := a.sdk.HMACAuthCredentials.ListHmacAuthWithConsumer(ctx, operations.ListHmacAuthWithConsumerRequest{
			ControlPlaneID: cpID, ConsumerIDForNestedEntities: consumerID, Size: &size, Tags: tags, Offset: offset})
		if err != nil || resp.Object == nil {
			return nil, nil, err
		}
		return anyPage(resp.Object.Data, resp.Object.Offset)
	}
	return nil, nil, fmt.Errorf("unknown credential type %q", t)
}

func (a *sdkAPI) CreateCredential(ctx context.Context, t CredentialType, cpID, consumerID string, body map[string]any) (string, error) {
	var out any
	err := a.call(ctx, "create "+string(t)+" credential", func(ctx context.Context) error {
		var err error
		switch t {
		case CredentialBasicAuth:
			var req operations.CreateBasicAuthWithConsumerRequest
			if err = fromMap(body, &req.BasicAuthWithoutParents); err != nil {
				return err
			}
			req.ControlPlaneID, req.ConsumerIDForNestedEntities = cpID, consumerID
			resp, err := a.sdk.BasicAuthCredentials.CreateBasicAuthWithConsumer(ctx, req)
			if err == nil {
				out = resp.BasicAuth
			}
			return err
		case CredentialKeyAuth:
			req := operations.CreateKeyAuthWithConsumerRequest{KeyAuthWithoutParents: &components.KeyAuthWithoutParents{}}
			if err = fromMap(body, req.KeyAuthWithoutParents); err != nil {
				return err
			}
			req.ControlPlaneID, req.ConsumerIDForNestedEntities = cpID, consumerID
			resp, err := a.sdk.APIKeys.CreateKeyAuthWithConsumer(ctx, req)
			if err == nil {
				out = resp.KeyAuth
			}
			return err
		case CredentialACL:
			var req operations.CreateACLWithConsumerRequest
			if err = fromMap(body, &req.ACLWithoutParents); err != nil {
				return err
			}
			req.ControlPlaneID, req.ConsumerIDForNestedEntities = cpID, consumerID
			resp, err := a.sdk.ACLs.CreateACLWithConsumer(ctx, req)
			if err == nil {
				out = resp.ACL
			}
			return err
		case CredentialJWT:
			req := operations.CreateJwtWithConsumerRequest{JWTWithoutParents: &components.JWTWithoutParents{}}
			if err = fromMap(body, req.JWTWithoutParents); err != nil {
				return err
			}
			req.ControlPlaneID, req.ConsumerIDForNestedEntities = cpID, consumerID
			resp, err := a.sdk.JWTs.CreateJwtWithConsumer(ctx, req)
			if err == nil {
				out = resp.Jwt
			}
			return err
		case CredentialHMACAuth:
			var req operations.CreateHmacAuthWithConsumerRequest
			if err = fromMap(body, &req.HMACAuthWithoutParents); err != nil {
				return err
			}
			req.ControlPlaneID, req.ConsumerIDForNestedEntities = cpID, consumerID
			resp, err := a.sdk.HMACAuthCredentials.CreateHmacAuthWithConsumer(ctx, req)
			if err == nil {
				out = resp.HMACAuth
			}
			return err
		}
		return fmt.Errorf("unknown credential type %q", t)
	})
	if err != nil {
		return "", err
	}
	e, err := answered(EntityType(t+" credential"), out)
	return e.ID, err
}

func (a *sdkAPI) UpdateCredential(ctx context.Context, t CredentialType, cpID, consumerID, id string, body map[string]any) error {
	return a.call(ctx, "update "+string(t)+" credential", func(ctx context.Context) error {
		var err error
		switch t {
		case CredentialBasicAuth:
			req := operations.UpsertBasicAuthWithConsumerRequest{ControlPlaneID: cpID, ConsumerIDForNestedEntities: consumerID, BasicAuthID: id}
			if err = fromMap(body, &req.BasicAuthWithoutParents); err == nil {
				_, err = a.sdk.BasicAuthCredentials.UpsertBasicAuthWithConsumer(ctx, req)
			}
		case CredentialKeyAuth:
			req := operations.UpsertKeyAuthWithConsumerRequest{ControlPlaneID: cpID, ConsumerIDForNestedEntities: consumerID, KeyAuthID: id}
			if err = fromMap(body, &req.KeyAuthWithoutParents); err == nil {
				_, err = a.sdk.APIKeys.UpsertKeyAuthWithConsumer(ctx, req)
			}
		case CredentialACL:
			req := operations.UpsertACLWithConsumerRequest{ControlPlaneID: cpID, ConsumerIDForNestedEntities: consumerID, ACLID: id}
			if err = fromMap(body, &req.ACLWithoutParents); err == nil {
				_, err = a.sdk.ACLs.UpsertACLWithConsumer(ctx, req)
			}
		case CredentialJWT:
			req := operations.UpsertJwtWithConsumerRequest{ControlPlaneID: cpID, ConsumerIDForNestedEntities: consumerID, JWTID: id}
			if err = fromMap(body, &req.JWTWithoutParents); err == nil {
				_, err = a.sdk.JWTs.UpsertJwtWithConsumer(ctx, req)
			}
		case CredentialHMACAuth:
			req := operations.UpsertHmacAuthWithConsumerRequest{ControlPlaneID: cpID, ConsumerIDForNestedEntities: consumerID, HMACAuthID: id}
			if err = fromMap(body, &req.HMACAuthWithoutParents); err == nil {
				_, err = a.sdk.HMACAuthCredentials.UpsertHmacAuthWithConsumer(ctx, req)
			}
		default:
			err = fmt.Errorf("unknown credential type %q", t)
		}
		return err
	})
}

func (a *sdkAPI) DeleteCredential(ctx context.Context, t CredentialType, cpID, consumerID, id string) error {
	return a.call(ctx, "delete "+string(t)+" credential", func(ctx context.Context) error {
		var err error
		switch t {
		case CredentialBasicAuth:
			_, err = a.sdk.BasicAuthCredentials.DeleteBasicAuthWithConsumer(ctx, operations.DeleteBasicAuthWithConsumerRequest{
				ControlPlaneID: cpID, ConsumerIDForNestedEntities: consumerID, BasicAuthID: id})
		case CredentialKeyAuth:
			_, err = a.sdk.APIKeys.DeleteKeyAuthWithConsumer(ctx, operations.DeleteKeyAuthWithConsumerRequest{
				ControlPlaneID: cpID, ConsumerIDForNestedEntities: consumerID, KeyAuthID: id})
		case CredentialACL:
			_, err = a.sdk.ACLs.DeleteACLWithConsumer(ctx, operations.DeleteACLWithConsumerRequest{
				ControlPlaneID: cpID, ConsumerIDForNestedEntities: consumerID, ACLID: id})
		case CredentialJWT:
			_, err = a.sdk.JWTs.DeleteJwtWithConsumer(ctx, operations.DeleteJwtWithConsumerRequest{
				ControlPlaneID: cpID, ConsumerIDForNestedEntities: consumerID, JWTID: id})
		case CredentialHMACAuth:
			_, err = a.sdk.HMACAuthCredentials.DeleteHmacAuthWithConsumer(ctx, operations.DeleteHmacAuthWithConsumerRequest{
				ControlPlaneID: cpID, ConsumerIDForNestedEntities: consumerID, HMACAuthID: id})
		default:
			err = fmt.Errorf("unknown credential type %q", t)
		}
		return err
	})
}
