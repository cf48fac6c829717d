package konnectapi

import (
	"context"
	"strings"

	"github.com/Kong/sdk-konnect-go/models/components"
	"github.com/Kong/sdk-konnect-go/models/operations"
)

// The SDK calls of vaults and data plane client certificates.

var vaultOps = gatewayOps{
	create: func(ctx context.Context, a *sdkAPI, cpID string, body map[string]any) (any, error) {
		return send(body, as[components.Vault], func(r components.Vault) (any, error) {
			resp, err := a.sdk.Vaults.CreateVault(ctx, cpID, r)
			return field(resp, err, func() any { return resp.Vault })
		})
	},
	update: func(ctx context.Context, a *sdkAPI, cpID, id string, body map[string]any) (any, error) {
		return send(body, as[components.Vault], func(r components.Vault) (any, error) {
			resp, err := a.sdk.Vaults.UpsertVault(ctx, operations.UpsertVaultRequest{ControlPlaneID: cpID, VaultID: id, Vault: r})
			return field(resp, err, func() any { return resp.Vault })
		})
	},
	del: func(ctx context.Context, a *sdkAPI, cpID, _, id string) error {
		_, err := a.sdk.Vaults.DeleteVault(ctx, cpID, id)
		return err
	},
	list: func(ctx context.Context, a *sdkAPI, cpID string, size int64, tags, offset *string) ([]any, *string, error) {
		resp, err := a.sdk.Vaults.ListVault(ctx, operations.ListVaultRequest{ControlPlaneID: cpID, Size: &size, Tags: tags, Offset: offset})
		if err != nil || resp.Object == nil {
			return nil, nil, err
		}
		return anyPage(resp.Object.Data, resp.Object.Offset)
	},
}

// kindTagPrefix is the prefix of the identity tag naming an object's kind (entity.TagKind): the only filter a list
// of untagged data plane client certificates can answer (with all of them).
const kindTagPrefix = "k8s-kind:"

var dpCertificateOps = gatewayOps{
	create: func(ctx context.Context, a *sdkAPI, cpID string, body map[string]any) (any, error) {
		return send(body, as[components.DataPlaneClientCertificateRequest], func(r components.DataPlaneClientCertificateRequest) (any, error) {
			resp, err := a.sdk.DPCertificates.CreateDataplaneCertificate(ctx, cpID, &r)
			return field(resp, err, func() any { return dpItem(resp.DataPlaneClientCertificateResponse) })
		})
	},
	update: func(ctx context.Context, a *sdkAPI, cpID, id string, body map[string]any) (any, error) {
		return send(body, as[components.DataPlaneClientCertificateRequest], func(r components.DataPlaneClientCertificateRequest) (any, error) {
			resp, err := a.sdk.DPCertificates.UpdateDataplaneCertificate(ctx, operations.UpdateDataplaneCertificateRequest{ControlPlaneID: cpID, CertificateID: id, DataPlaneClientCertificateRequest: &r})
			return field(resp, err, func() any { return dpItem(resp.DataPlaneClientCertificateResponse) })
		})
	},
	del: func(ctx context.Context, a *sdkAPI, cpID, _, id string) error {
		_, err := a.sdk.DPCertificates.DeleteDataplaneCertificate(ctx, cpID, id)
		return err
	},
	// list answers every certificate in one page; a filter other than a kind tag matches none (they have no tags).
	list: func(ctx context.Context, a *sdkAPI, cpID string, _ int64, tags, _ *string) ([]any, *string, error) {
		if tags != nil && !strings.HasPrefix(*tags, kindTagPrefix) {
			return nil, nil, nil
		}
		resp, err := a.sdk.DPCertificates.ListDpClientCertificates(ctx, cpID)
		if err != nil || resp.ListDataPlaneCertificatesResponse == nil {
			return nil, nil, err
		}
		return anyPage(resp.ListDataPlaneCertificatesResponse.Items, nil)
	},
}

// dpItem is the certificate of an answer, or nil.
func dpItem(r *components.DataPlaneClientCertificateResponse) any {
	if r == nil || r.Item == nil {
		return nil
	}
	return r.Item
}
