package konnectapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/Kong/sdk-konnect-go/models/components"
	"github.com/Kong/sdk-konnect-go/models/operations"
)

// The entity types of upstreams, certificates, keys and vaults.
const (
	TypeUpstream EntityType = "upstream"
	// TypeTarget is a target of an upstream: its body names the upstream, and it is deleted through it (see
	// InParent).
	TypeTarget        EntityType = "target"
	TypeCertificate   EntityType = "certificate"
	TypeCACertificate EntityType = "ca certificate"
	// TypeSNI is a server name of a certificate (its body names the certificate).
	TypeSNI EntityType = "sni"
	// TypeKey is a key, in a key set when its body names one.
	TypeKey    EntityType = "key"
	TypeKeySet EntityType = "key set"
	TypeVault  EntityType = "vault"
	// TypeDataPlaneCertificate is a data plane client certificate. Konnect keeps no tags on it: a list filtered by
	// a k8s-kind tag lists every certificate of the control plane, by any other tag none.
	TypeDataPlaneCertificate EntityType = "data plane client certificate"
)

// InParent is the control plane scope of an entity Konnect deletes through its parent (a target through its
// upstream): Delete and List take it in place of the control plane ID.
func InParent(cpID, parentID string) string {
	if parentID == "" {
		return cpID
	}
	return cpID + "/" + parentID
}

// splitScope splits a scope made by InParent.
func splitScope(scope string) (cpID, parentID string) {
	cpID, parentID, _ = strings.Cut(scope, "/")
	return cpID, parentID
}

// gatewayOps are the SDK calls of one entity type: each returns the entity answered (create, update) or one page
// of entities with the offset of the next (list).
type gatewayOps struct {
	create func(ctx context.Context, a *sdkAPI, cpID string, body map[string]any) (any, error)
	update func(ctx context.Context, a *sdkAPI, cpID, id string, body map[string]any) (any, error)
	del    func(ctx context.Context, a *sdkAPI, cpID, parentID, id string) error
	list   func(ctx context.Context, a *sdkAPI, cpID string, size int64, tags, offset *string) ([]any, *string, error)
}

func (a *sdkAPI) createGateway(ctx context.Context, t EntityType, cpID string, body map[string]any) (any, error) {
	ops, ok := gatewayTypes[t]
	if !ok {
		return nil, fmt.Errorf("unknown entity type %q", t)
	}
	return ops.create(ctx, a, cpID, body)
}

func (a *sdkAPI) updateGateway(ctx context.Context, t EntityType, cpID, id string, body map[string]any) (any, error) {
	ops, ok := gatewayTypes[t]
	if !ok {
		return nil, fmt.Errorf("unknown entity type %q", t)
	}
	return ops.update(ctx, a, cpID, id, body)
}

func (a *sdkAPI) deleteGateway(ctx context.Context, t EntityType, scope, id string) error {
	ops, ok := gatewayTypes[t]
	if !ok {
		return fmt.Errorf("unknown entity type %q", t)
	}
	cpID, parentID := splitScope(scope)
	return ops.del(ctx, a, cpID, parentID, id)
}

func (a *sdkAPI) listGatewayPage(ctx context.Context, t EntityType, scope string, size int64, tags, offset *string) ([]any, *string, error) {
	ops, ok := gatewayTypes[t]
	if !ok {
		return nil, nil, fmt.Errorf("unknown entity type %q", t)
	}
	cpID, _ := splitScope(scope)
	return ops.list(ctx, a, cpID, size, tags, offset)
}

// parentID is the ID of the entity body names in field ({"id": ...}), "" when none.
func parentID(body map[string]any, field string) string {
	ref, _ := body[field].(map[string]any)
	id, _ := ref["id"].(string)
	return id
}

// gatewayTypes are the SDK calls of every type in this file.
var gatewayTypes = map[EntityType]gatewayOps{
	TypeUpstream: {
		create: func(ctx context.Context, a *sdkAPI, cpID string, body map[string]any) (any, error) {
			return send(body, as[components.Upstream], func(r components.Upstream) (any, error) {
				resp, err := a.sdk.Upstreams.CreateUpstream(ctx, cpID, r)
				return field(resp, err, func() any { return resp.Upstream })
			})
		},
		update: func(ctx context.Context, a *sdkAPI, cpID, id string, body map[string]any) (any, error) {
			return send(body, as[components.Upstream], func(r components.Upstream) (any, error) {
				resp, err := a.sdk.Upstreams.UpsertUpstream(ctx, operations.UpsertUpstreamRequest{ControlPlaneID: cpID, UpstreamID: id, Upstream: r})
				return field(resp, err, func() any { return resp.Upstream })
			})
		},
		del: func(ctx context.Context, a *sdkAPI, cpID, _, id string) error {
			_, err := a.sdk.Upstreams.DeleteUpstream(ctx, cpID, id)
			return err
		},
		list: func(ctx context.Context, a *sdkAPI, cpID string, size int64, tags, offset *string) ([]any, *string, error) {
			resp, err := a.sdk.Upstreams.ListUpstream(ctx, operations.ListUpstreamRequest{ControlPlaneID: cpID, Size: &size, Tags: tags, Offset: offset})
			if err != nil || resp.Object == nil {
				return nil, nil, err
			}
			return anyPage(resp.Object.Data, resp.Object.Offset)
		},
	},
	TypeTarget:               targetOps,
	TypeCertificate:          certificateOps,
	TypeCACertificate:        caCertificateOps,
	TypeSNI:                  sniOps,
	TypeKey:                  keyOps,
	TypeKeySet:               keySetOps,
	TypeVault:                vaultOps,
	TypeDataPlaneCertificate: dpCertificateOps,
}

// targetOps write a target through the upstream its body names; a delete without the upstream finds it first.
var targetOps = gatewayOps{
	create: func(ctx context.Context, a *sdkAPI, cpID string, body map[string]any) (any, error) {
		return send(body, as[components.TargetWithoutParents], func(r components.TargetWithoutParents) (any, error) {
			resp, err := a.sdk.Targets.CreateTargetWithUpstream(ctx, operations.CreateTargetWithUpstreamRequest{ControlPlaneID: cpID, UpstreamIDForTarget: parentID(body, "upstream"), TargetWithoutParents: r})
			return field(resp, err, func() any { return resp.Target })
		})
	},
	update: func(ctx context.Context, a *sdkAPI, cpID, id string, body map[string]any) (any, error) {
		return send(body, as[components.TargetWithoutParents], func(r components.TargetWithoutParents) (any, error) {
			resp, err := a.sdk.Targets.UpsertTargetWithUpstream(ctx, operations.UpsertTargetWithUpstreamRequest{ControlPlaneID: cpID, UpstreamIDForTarget: parentID(body, "upstream"), TargetID: id, TargetWithoutParents: r})
			return field(resp, err, func() any { return resp.Target })
		})
	},
	del: func(ctx context.Context, a *sdkAPI, cpID, upstreamID, id string) error {
		if upstreamID == "" {
			found, err := allPages("", func(size int64, tags, offset *string) ([]any, *string, error) {
				return listTargets(ctx, a, cpID, size, tags, offset)
			})
			if err != nil {
				return err
			}
			for _, e := range found {
				if e.ID == id {
					upstreamID = parentID(e.Body, "upstream")
				}
			}
			if upstreamID == "" {
				return &APIError{StatusCode: http.StatusNotFound, Op: "delete target", Err: errors.New("no such target in the control plane")}
			}
		}
		_, err := a.sdk.Targets.DeleteTargetWithUpstream(ctx, operations.DeleteTargetWithUpstreamRequest{ControlPlaneID: cpID, UpstreamIDForTarget: upstreamID, TargetID: id})
		return err
	},
	list: listTargets,
}

// listTargets reads one page of the targets of every upstream of a control plane.
func listTargets(ctx context.Context, a *sdkAPI, cpID string, size int64, tags, offset *string) ([]any, *string, error) {
	resp, err := a.sdk.Targets.ListTargets(ctx, operations.ListTargetsRequest{ControlPlaneID: cpID, Size: &size, Tags: tags, Offset: offset})
	if err != nil || resp.ListTargets == nil {
		return nil, nil, err
	}
	return anyPage(resp.ListTargets.Data, resp.ListTargets.Offset)
}
