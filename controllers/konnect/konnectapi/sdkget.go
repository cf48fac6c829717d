package konnectapi

import (
	"context"
	"fmt"

	"github.com/Kong/sdk-konnect-go/models/operations"
)

// Get returns the entity id of type t in control plane cpID, as Konnect stores it (what spec.adopt takes over).
// The types a spec.adopt can name are served; a missing entity is an *APIError with StatusCode 404.
func (a *sdkAPI) Get(ctx context.Context, t EntityType, cpID, id string) (Entity, error) {
	if t == TypeControlPlane {
		return a.GetControlPlane(ctx, id)
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
