package konnectapi

import (
	"context"
	"fmt"
	"net/http"

	"github.com/Kong/sdk-konnect-go/models/operations"
)

// Get returns the entity id of type t in control plane cpID, as Konnect stores it (what spec.adopt takes over).
// The types a spec.adopt can name are served; a missing entity is an *APIError with StatusCode 404.
func (a *sdkAPI) Get(ctx context.Context, t EntityType, cpID, id string) (Entity, error) {
	if t == TypeControlPlane {
		return a.GetControlPlane(ctx, id)
	}
	if _, ok := gatewayTypes[t]; ok {
		return a.getGateway(ctx, t, cpID, id)
	}
	var out any
	err := a.call(ctx, "get "+string(t), func(ctx context.Context) error {
		var err error
		switch t {
		case TypeService:
			resp, e := a.sdk.Services.GetService(ctx, id, cpID)
			out, err = field(resp, e, func() any { return resp.Service })
		case TypeRoute:
			resp, e := a.sdk.Routes.GetRoute(ctx, id, cpID)
			out, err = field(resp, e, func() any { return routeJSON(resp.Route) })
		case TypeConsumer:
			resp, e := a.sdk.Consumers.GetConsumer(ctx, id, cpID)
			out, err = field(resp, e, func() any { return resp.Consumer })
		case TypeConsumerGroup:
			resp, e := a.sdk.ConsumerGroups.GetConsumerGroup(ctx, operations.GetConsumerGroupRequest{ControlPlaneID: cpID, ConsumerGroupID: id})
			out, err = field(resp, e, func() any {
				if resp.ConsumerGroupInsideWrapper == nil {
					return nil
				}
				return resp.ConsumerGroupInsideWrapper.ConsumerGroup
			})
		default:
			err = fmt.Errorf("konnect: adopting a %s is not supported", t)
		}
		return err
	})
	if err != nil {
		return Entity{}, err
	}
	return answered(t, out)
}

// getGateway finds the entity id of a type of upstreams, TLS material, keys and vaults in the list of its control
// plane (the calls every kind has; an adoption reads it once). A target is found among the targets of every upstream.
func (a *sdkAPI) getGateway(ctx context.Context, t EntityType, cpID, id string) (Entity, error) {
	var found []Entity
	err := a.call(ctx, "get "+string(t), func(ctx context.Context) error {
		var err error
		found, err = allPages("", func(size int64, tags, offset *string) ([]any, *string, error) {
			return a.listGatewayPage(ctx, t, cpID, size, tags, offset)
		})
		return err
	})
	if err != nil {
		return Entity{}, err
	}
	for _, e := range found {
		if e.ID == id {
			return e, nil
		}
	}
	return Entity{}, &APIError{StatusCode: http.StatusNotFound, Op: "get " + string(t), Err: fmt.Errorf("no %s %s in control plane %s", t, id, cpID)}
}
