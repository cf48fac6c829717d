package konnectapi

import (
	"context"

	"github.com/Kong/sdk-konnect-go/models/components"
	"github.com/Kong/sdk-konnect-go/models/operations"
)

// The SDK calls of certificates, CA certificates, SNIs, keys and key sets.

var certificateOps = gatewayOps{
	create: func(ctx context.Context, a *sdkAPI, cpID string, body map[string]any) (any, error) {
		return send(body, as[components.CertificateRequest], func(r components.CertificateRequest) (any, error) {
			resp, err := a.sdk.Certificates.CreateCertificate(ctx, cpID, r)
			return field(resp, err, func() any { return resp.Certificate })
		})
	},
	update: func(ctx context.Context, a *sdkAPI, cpID, id string, body map[string]any) (any, error) {
		return send(body, as[components.CertificateRequest], func(r components.CertificateRequest) (any, error) {
			resp, err := a.sdk.Certificates.UpsertCertificate(ctx, operations.UpsertCertificateRequest{ControlPlaneID: cpID, CertificateID: id, CertificateRequest: r})
			return field(resp, err, func() any { return resp.Certificate })
		})
	},
	del: func(ctx context.Context, a *sdkAPI, cpID, _, id string) error {
		_, err := a.sdk.Certificates.DeleteCertificate(ctx, cpID, id)
		return err
	},
	list: func(ctx context.Context, a *sdkAPI, cpID string, size int64, tags, offset *string) ([]any, *string, error) {
		resp, err := a.sdk.Certificates.ListCertificate(ctx, operations.ListCertificateRequest{ControlPlaneID: cpID, Size: &size, Tags: tags, Offset: offset})
		if err != nil || resp.Object == nil {
			return nil, nil, err
		}
		return anyPage(resp.Object.Data, resp.Object.Offset)
	},
}

var caCertificateOps = gatewayOps{
	create: func(ctx context.Context, a *sdkAPI, cpID string, body map[string]any) (any, error) {
		return send(body, as[components.CACertificate], func(r components.CACertificate) (any, error) {
			resp, err := a.sdk.CACertificates.CreateCaCertificate(ctx, cpID, r)
			return field(resp, err, func() any { return resp.CACertificate })
		})
	},
	update: func(ctx context.Context, a *sdkAPI, cpID, id string, body map[string]any) (any, error) {
		return send(body, as[components.CACertificate], func(r components.CACertificate) (any, error) {
			resp, err := a.sdk.CACertificates.UpsertCaCertificate(ctx, operations.UpsertCaCertificateRequest{ControlPlaneID: cpID, CACertificateID: id, CACertificate: r})
			return field(resp, err, func() any { return resp.CACertificate })
		})
	},
	del: func(ctx context.Context, a *sdkAPI, cpID, _, id string) error {
		_, err := a.sdk.CACertificates.DeleteCaCertificate(ctx, cpID, id)
		return err
	},
	list: func(ctx context.Context, a *sdkAPI, cpID string, size int64, tags, offset *string) ([]any, *string, error) {
		resp, err := a.sdk.CACertificates.ListCaCertificate(ctx, operations.ListCaCertificateRequest{ControlPlaneID: cpID, Size: &size, Tags: tags, Offset: offset})
		if err != nil || resp.Object == nil {
			return nil, nil, err
		}
		return anyPage(resp.Object.Data, resp.Object.Offset)
	},
}

var sniOps = gatewayOps{
	create: func(ctx context.Context, a *sdkAPI, cpID string, body map[string]any) (any, error) {
		return send(body, as[components.Sni], func(r components.Sni) (any, error) {
			resp, err := a.sdk.SNIs.CreateSni(ctx, cpID, r)
			return field(resp, err, func() any { return resp.Sni })
		})
	},
	update: func(ctx context.Context, a *sdkAPI, cpID, id string, body map[string]any) (any, error) {
		return send(body, as[components.Sni], func(r components.Sni) (any, error) {
			resp, err := a.sdk.SNIs.UpsertSni(ctx, operations.UpsertSniRequest{ControlPlaneID: cpID, SNIID: id, Sni: r})
			return field(resp, err, func() any { return resp.Sni })
		})
	},
	del: func(ctx context.Context, a *sdkAPI, cpID, _, id string) error {
		_, err := a.sdk.SNIs.DeleteSni(ctx, cpID, id)
		return err
	},
	list: func(ctx context.Context, a *sdkAPI, cpID string, size int64, tags, offset *string) ([]any, *string, error) {
		resp, err := a.sdk.SNIs.ListSni(ctx, operations.ListSniRequest{ControlPlaneID: cpID, Size: &size, Tags: tags, Offset: offset})
		if err != nil || resp.Object == nil {
			return nil, nil, err
		}
		return anyPage(resp.Object.Data, resp.Object.Offset)
	},
}

var keyOps = gatewayOps{
	create: func(ctx context.Context, a *sdkAPI, cpID string, body map[string]any) (any, error) {
		return send(body, as[components.Key], func(r components.Key) (any, error) {
			resp, err := a.sdk.Keys.CreateKey(ctx, cpID, r)
			return field(resp, err, func() any { return resp.Key })
		})
	},
	update: func(ctx context.Context, a *sdkAPI, cpID, id string, body map[string]any) (any, error) {
		return send(body, as[components.Key], func(r components.Key) (any, error) {
			resp, err := a.sdk.Keys.UpsertKey(ctx, operations.UpsertKeyRequest{ControlPlaneID: cpID, KeyID: id, Key: r})
			return field(resp, err, func() any { return resp.Key })
		})
	},
	del: func(ctx context.Context, a *sdkAPI, cpID, _, id string) error {
		_, err := a.sdk.Keys.DeleteKey(ctx, cpID, id)
		return err
	},
	list: func(ctx context.Context, a *sdkAPI, cpID string, size int64, tags, offset *string) ([]any, *string, error) {
		resp, err := a.sdk.Keys.ListKey(ctx, operations.ListKeyRequest{ControlPlaneID: cpID, Size: &size, Tags: tags, Offset: offset})
		if err != nil || resp.Object == nil {
			return nil, nil, err
		}
		return anyPage(resp.Object.Data, resp.Object.Offset)
	},
}

var keySetOps = gatewayOps{
	create: func(ctx context.Context, a *sdkAPI, cpID string, body map[string]any) (any, error) {
		return send(body, as[components.KeySet], func(r components.KeySet) (any, error) {
			resp, err := a.sdk.KeySets.CreateKeySet(ctx, cpID, &r)
			return field(resp, err, func() any { return resp.KeySet })
		})
	},
	update: func(ctx context.Context, a *sdkAPI, cpID, id string, body map[string]any) (any, error) {
		return send(body, as[components.KeySet], func(r components.KeySet) (any, error) {
			resp, err := a.sdk.KeySets.UpsertKeySet(ctx, operations.UpsertKeySetRequest{ControlPlaneID: cpID, KeySetID: id, KeySet: &r})
			return field(resp, err, func() any { return resp.KeySet })
		})
	},
	del: func(ctx context.Context, a *sdkAPI, cpID, _, id string) error {
		_, err := a.sdk.KeySets.DeleteKeySet(ctx, cpID, id)
		return err
	},
	list: func(ctx context.Context, a *sdkAPI, cpID string, size int64, tags, offset *string) ([]any, *string, error) {
		resp, err := a.sdk.KeySets.ListKeySet(ctx, operations.ListKeySetRequest{ControlPlaneID: cpID, Size: &size, Tags: tags, Offset: offset})
		if err != nil || resp.Object == nil {
			return nil, nil, err
		}
		return anyPage(resp.Object.Data, resp.Object.Offset)
	},
}
