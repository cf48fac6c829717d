package konnectapi

import (
	"context"

	"github.com/Kong/sdk-konnect-go/models/operations"
)

// Consumer group memberships: a consumer's groups, a group's consumers, joining and leaving.

func (a *sdkAPI) ConsumerGroupsOf(ctx context.Context, cpID, consumerID string) ([]Entity, error) {
	var out []Entity
	err := a.call(ctx, "list consumer group memberships", func(ctx context.Context) error {
		var err error
		out, err = allPages("", func(size int64, tags, offset *string) ([]any, *string, error) {
			resp, err := a.sdk.Consumers.ListConsumerGroupsForConsumer(ctx, operations.ListConsumerGroupsForConsumerRequest{
				ControlPlaneID: cpID, ConsumerID: consumerID, Size: &size, Tags: tags, Offset: offset,
			})
			if err != nil || resp.Object == nil {
				return nil, nil, err
			}
			return anyPage(resp.Object.Data, resp.Object.Offset)
		})
		return err
	})
	return out, err
}

func (a *sdkAPI) ConsumersOfGroup(ctx context.Context, cpID, groupID string) ([]Entity, error) {
	var out []Entity
	err := a.call(ctx, "list consumer group members", func(ctx context.Context) error {
		var err error
		out, err = allPages("", func(size int64, tags, offset *string) ([]any, *string, error) {
			resp, err := a.sdk.ConsumerGroups.ListConsumersForConsumerGroup(ctx, operations.ListConsumersForConsumerGroupRequest{
				ControlPlaneID: cpID, ConsumerGroupID: groupID, Size: &size, Tags: tags, Offset: offset,
			})
			if err != nil || resp.Object == nil {
				return nil, nil, err
			}
			return anyPage(resp.Object.Data, resp.Object.Offset)
		})
		return err
	})
	return out, err
}

func (a *sdkAPI) AddToConsumerGroup(ctx context.Context, cpID, consumerID, groupID string) error {
	return a.call(ctx, "create consumer group membership", func(ctx context.Context) error {
		_, err := a.sdk.Consumers.AddConsumerToSpecificConsumerGroup(ctx, operations.AddConsumerToSpecificConsumerGroupRequest{
			ControlPlaneID: cpID, ConsumerID: consumerID,
			RequestBody: &operations.AddConsumerToSpecificConsumerGroupRequestBody{Group: &groupID},
		})
		return err
	})
}

func (a *sdkAPI) RemoveFromConsumerGroup(ctx context.Context, cpID, consumerID, groupID string) error {
	return a.call(ctx, "delete consumer group membership", func(ctx context.Context) error {
		_, err := a.sdk.Consumers.RemoveConsumerFromConsumerGroup(ctx, operations.RemoveConsumerFromConsumerGroupRequest{
			ControlPlaneID: cpID, ConsumerID: consumerID, ConsumerGroupID: groupID,
		})
		return err
	})
}
