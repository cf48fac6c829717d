package coreentities_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/Kong/sdk-konnect-go/models/components"
	"github.com/Kong/sdk-konnect-go/models/operations"

	"github.com/almproject/alm/test/konnectsim"
	"github.com/almproject/alm/test/konnectsim/internal/simtest"
)

// Plugins through the SDK: scoped to what exists, unique per name and scope, the configuration's defaults filled
// in, deleted with what they are scoped to.
func TestPlugins(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	ctx := context.Background()
	cp := simtest.CreateControlPlane(t, sdk, "cp", nil).ID
	svc := simtest.CreateService(t, sdk, cp, "svc")
	rateLimit := func(scope func(*components.Plugin)) components.Plugin {
		p := components.Plugin{Name: "rate-limiting", Config: map[string]any{"minute": 5}, Tags: []string{"k8s-uid:1"}}
		if scope != nil {
			scope(&p)
		}
		return p
	}
	onService := func(p *components.Plugin) { p.Service = &components.PluginService{ID: svc.ID} }

	created, err := sdk.Plugins.CreatePlugin(ctx, cp, rateLimit(onService))
	if err != nil || created.StatusCode != http.StatusCreated {
		t.Fatalf("create: %v", err)
	}
	p := created.Plugin
	if p.Config["policy"] != "local" || p.Config["minute"] != float64(5) || p.Enabled == nil || !*p.Enabled || len(p.Protocols) != 4 {
		t.Errorf("created plugin: config %v enabled %v protocols %v; want defaults filled in", p.Config, p.Enabled, p.Protocols)
	}
	// A global plugin of the same name is another scope.
	if _, err := sdk.Plugins.CreatePlugin(ctx, cp, rateLimit(nil)); err != nil {
		t.Fatalf("global plugin: %v", err)
	}

	for name, tc := range map[string]struct {
		plugin components.Plugin
		want   string
	}{
		"same name and scope": {rateLimit(onService), "data constraint error"},
		"unknown service": {rateLimit(func(p *components.Plugin) {
			p.Service = &components.PluginService{ID: simtest.Ptr("5f9fd312-a987-4628-b4c5-bb4f4fddd5f7")}
		}), "invalid reference 'service.id: 5f9fd312-a987-4628-b4c5-bb4f4fddd5f7' (no such entry in 'service')"},
		"unknown consumer group": {rateLimit(func(p *components.Plugin) {
			p.ConsumerGroup = &components.PluginConsumerGroup{ID: simtest.Ptr("5f9fd312-a987-4628-b4c5-bb4f4fddd5f7")}
		}), "no such entry in 'consumer_group'"},
		"unknown plugin":           {components.Plugin{Name: "no-such-plugin"}, "plugin 'no-such-plugin' not enabled"},
		"rate-limiting, no window": {components.Plugin{Name: "rate-limiting", Config: map[string]any{"policy": "local"}}, "'config.minute'"},
	} {
		_, err := sdk.Plugins.CreatePlugin(ctx, cp, tc.plugin)
		if simtest.SDKStatus(err) != http.StatusBadRequest || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want 400 with %q", name, err, tc.want)
		}
	}

	// PUT replaces: what is left out is back to its default.
	up := rateLimit(onService)
	up.Config = map[string]any{"hour": 100}
	upserted, err := sdk.Plugins.UpsertPlugin(ctx, operations.UpsertPluginRequest{ControlPlaneID: cp, PluginID: *p.ID, Plugin: up})
	if err != nil || upserted.Plugin.Config["minute"] != nil || upserted.Plugin.Config["hour"] != float64(100) {
		t.Fatalf("upsert: %v %v", err, upserted)
	}
	list, err := sdk.Plugins.ListPlugin(ctx, operations.ListPluginRequest{ControlPlaneID: cp, Tags: simtest.Ptr("k8s-uid:1")})
	if err != nil || len(list.Object.Data) != 2 {
		t.Fatalf("list by tag: %v, %d plugins", err, len(list.Object.Data))
	}
	// Deleting the service deletes its plugin, not the global one.
	if _, err := sdk.Services.DeleteService(ctx, cp, *svc.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := sdk.Plugins.GetPlugin(ctx, operations.GetPluginRequest{ControlPlaneID: cp, PluginID: *p.ID}); simtest.SDKStatus(err) != http.StatusNotFound {
		t.Errorf("plugin of the deleted service: %v, want 404", err)
	}
	if n := len(s.ObjectsOf(konnectsim.KindPlugin)); n != 1 {
		t.Errorf("%d plugins left, want the global one", n)
	}
}

// Consumer groups and their members, from both sides, through the SDK.
func TestConsumerGroups(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	ctx := context.Background()
	cp := simtest.CreateControlPlane(t, sdk, "cp", nil).ID
	gold, err := sdk.ConsumerGroups.CreateConsumerGroup(ctx, cp, components.ConsumerGroup{Name: "gold", Tags: []string{"a"}})
	if err != nil || gold.StatusCode != http.StatusCreated {
		t.Fatalf("create group: %v", err)
	}
	gid := *gold.ConsumerGroup.ID
	if _, err := sdk.ConsumerGroups.CreateConsumerGroup(ctx, cp, components.ConsumerGroup{Name: "gold"}); simtest.SDKStatus(err) != http.StatusBadRequest {
		t.Errorf("duplicate group name: %v, want 400", err)
	}
	alice, err := sdk.Consumers.CreateConsumer(ctx, cp, components.Consumer{Username: simtest.Ptr("alice")})
	if err != nil {
		t.Fatal(err)
	}
	aid := *alice.Consumer.ID

	added, err := sdk.Consumers.AddConsumerToSpecificConsumerGroup(ctx, operations.AddConsumerToSpecificConsumerGroupRequest{
		ControlPlaneID: cp, ConsumerID: aid, RequestBody: &operations.AddConsumerToSpecificConsumerGroupRequestBody{Group: &gid},
	})
	if err != nil || added.StatusCode != http.StatusCreated || len(added.Object.ConsumerGroups) != 1 {
		t.Fatalf("add by consumer: %v %+v", err, added)
	}
	if _, err := sdk.Consumers.AddConsumerToSpecificConsumerGroup(ctx, operations.AddConsumerToSpecificConsumerGroupRequest{
		ControlPlaneID: cp, ConsumerID: aid, RequestBody: &operations.AddConsumerToSpecificConsumerGroupRequestBody{Group: simtest.Ptr("gold")},
	}); simtest.SDKStatus(err) != http.StatusBadRequest {
		t.Errorf("adding twice: %v, want 400", err)
	}
	groups, err := sdk.Consumers.ListConsumerGroupsForConsumer(ctx, operations.ListConsumerGroupsForConsumerRequest{ControlPlaneID: cp, ConsumerID: aid})
	if err != nil || len(groups.Object.Data) != 1 || *groups.Object.Data[0].ID != gid {
		t.Fatalf("groups of alice: %v %+v", err, groups)
	}
	members, err := sdk.ConsumerGroups.ListConsumersForConsumerGroup(ctx, operations.ListConsumersForConsumerGroupRequest{ControlPlaneID: cp, ConsumerGroupID: gid})
	if err != nil || len(members.Object.Data) != 1 || *members.Object.Data[0].ID != aid {
		t.Fatalf("consumers of gold: %v %+v", err, members)
	}
	got, err := sdk.ConsumerGroups.GetConsumerGroup(ctx, operations.GetConsumerGroupRequest{ControlPlaneID: cp, ConsumerGroupID: gid})
	if err != nil || got.ConsumerGroupInsideWrapper == nil || got.ConsumerGroupInsideWrapper.ConsumerGroup.Name != "gold" {
		t.Fatalf("get group: %v %+v", err, got)
	}
	if _, err := sdk.Consumers.RemoveConsumerFromConsumerGroup(ctx, operations.RemoveConsumerFromConsumerGroupRequest{ControlPlaneID: cp, ConsumerID: aid, ConsumerGroupID: gid}); err != nil {
		t.Fatalf("remove: %v", err)
	}
	if _, err := sdk.Consumers.RemoveConsumerFromConsumerGroup(ctx, operations.RemoveConsumerFromConsumerGroupRequest{ControlPlaneID: cp, ConsumerID: aid, ConsumerGroupID: gid}); simtest.SDKStatus(err) != http.StatusNotFound {
		t.Errorf("removing again: %v, want 404", err)
	}
	// From the group's side; deleting the consumer ends its memberships.
	if _, err := sdk.ConsumerGroups.AddConsumerToGroup(ctx, operations.AddConsumerToGroupRequest{
		ControlPlaneID: cp, ConsumerGroupID: gid, RequestBody: &operations.AddConsumerToGroupRequestBody{ConsumerID: &aid},
	}); err != nil {
		t.Fatalf("add by group: %v", err)
	}
	if got := s.GroupConsumers(gid); !slices.Equal(got, []string{aid}) {
		t.Errorf("members %v, want [%s]", got, aid)
	}
	if _, err := sdk.Consumers.DeleteConsumer(ctx, cp, aid); err != nil {
		t.Fatal(err)
	}
	if got := s.GroupConsumers(gid); len(got) != 0 {
		t.Errorf("members after the consumer was deleted: %v", got)
	}
}
