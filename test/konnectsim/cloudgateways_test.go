package konnectsim_test

import (
	"context"
	"fmt"
	"testing"

	sdkkonnectgo "github.com/Kong/sdk-konnect-go"
	"github.com/Kong/sdk-konnect-go/models/components"
	"github.com/Kong/sdk-konnect-go/models/operations"
	"github.com/Kong/sdk-konnect-go/retry"

	"github.com/almproject/alm/test/konnectsim"
)

// A network is initializing for ReadsToReady reads and then ready, or offline with the reason FailNetwork gave;
// a transit gateway needs a ready network. Every exchange passes Kong's OpenAPI document (StartTest checks them).
func TestNetworkProvisioningStates(t *testing.T) {
	sim := konnectsim.StartTest(t, konnectsim.Options{})
	sim.SetNetworkReadsToReady(2)
	sim.FailNetwork("bad", "insufficient cloud provider compute instances")
	token := konnectsim.DefaultToken
	sdk := sdkkonnectgo.New(sdkkonnectgo.WithServerURL(sim.URL()),
		sdkkonnectgo.WithSecurity(components.Security{PersonalAccessToken: &token}), sdkkonnectgo.WithClient(sim.HTTPClient()))
	ctx := context.Background()
	create := func(name string) string {
		resp, err := sdk.CloudGateways.CreateNetwork(ctx, components.CreateNetworkRequest{Name: name,
			CloudGatewayProviderAccountID: "929b2449-c69f-44c4-b6ad-9ecec6f811ae", Region: "us-west", AvailabilityZones: []string{"us-west-1"}, CidrBlock: "10.0.0.0/16"})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Network.ID
	}
	good, bad := create("good"), create("bad")
	tg := components.CreateCreateTransitGatewayRequestAWSTransitGateway(components.AWSTransitGateway{Name: "tg", CidrBlocks: []string{"10.1.0.0/24"},
		TransitGatewayAttachmentConfig: components.AwsTransitGatewayAttachmentConfig{Kind: components.AWSTransitGatewayAttachmentConfigAWSTransitGatewayAttachmentTypeAwsTransitGatewayAttachment,
			TransitGatewayID: "tgw-1", RAMShareArn: "arn:aws:ram:us-west-2:123456789012:resource-share/1"}})
	// The SDK retries this 400 for up to an hour unless told not to.
	if _, err := sdk.CloudGateways.CreateTransitGateway(ctx, good, tg, operations.WithRetries(retry.Config{Strategy: "none"})); err == nil {
		t.Error("a transit gateway was accepted on a network still initializing")
	}
	for i, want := range []string{"initializing", "ready", "ready"} {
		resp, err := sdk.CloudGateways.GetNetwork(ctx, good)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(resp.Network.State); got != want {
			t.Errorf("read %d: state %s, want %s", i+1, got, want)
		}
	}
	for i := 0; i < 2; i++ {
		resp, err := sdk.CloudGateways.GetNetwork(ctx, bad)
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 && (resp.Network.State != "offline" || resp.Network.StateMetadata == nil || *resp.Network.StateMetadata.Reason != "insufficient cloud provider compute instances") {
			t.Errorf("failed network: state %s, metadata %+v", resp.Network.State, resp.Network.StateMetadata)
		}
	}
	if _, err := sdk.CloudGateways.CreateTransitGateway(ctx, good, tg); err != nil {
		t.Errorf("transit gateway on a ready network: %v", err)
	}
}

// Networks and transit gateways are found by name (filter[name][eq]) and updated as the document allows: a network's
// name, an AWS transit gateway's cidr_blocks; an Azure transit gateway takes no update, a taken name is a conflict.
func TestNetworkAndTransitGatewayListAndUpdate(t *testing.T) {
	sim := konnectsim.StartTest(t, konnectsim.Options{})
	sim.SetNetworkReadsToReady(0)
	token := konnectsim.DefaultToken
	sdk := sdkkonnectgo.New(sdkkonnectgo.WithServerURL(sim.URL()),
		sdkkonnectgo.WithSecurity(components.Security{PersonalAccessToken: &token}), sdkkonnectgo.WithClient(sim.HTTPClient()))
	ctx := context.Background()
	var ids []string
	for _, name := range []string{"one", "two"} {
		resp, err := sdk.CloudGateways.CreateNetwork(ctx, components.CreateNetworkRequest{Name: name,
			CloudGatewayProviderAccountID: "929b2449-c69f-44c4-b6ad-9ecec6f811ae", Region: "us-west", AvailabilityZones: []string{"us-west-1"}, CidrBlock: "10.0.0.0/16"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, resp.Network.ID)
	}
	byName := func(name string) []string {
		resp, err := sdk.CloudGateways.ListNetworks(ctx, operations.ListNetworksRequest{
			Filter: &components.NetworksFilterParameters{Name: &components.CloudGatewaysStringFieldFilterOverride{Eq: &name}}})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, n := range resp.ListNetworksResponse.Data {
			got = append(got, n.ID)
		}
		return got
	}
	if got := byName("two"); len(got) != 1 || got[0] != ids[1] {
		t.Errorf("networks named two: %v, want [%s]", got, ids[1])
	}
	renamed := "three"
	if _, err := sdk.CloudGateways.UpdateNetwork(ctx, ids[1], components.PatchNetworkRequest{Name: &renamed}); err != nil {
		t.Fatal(err)
	}
	if got := byName("three"); len(got) != 1 || got[0] != ids[1] || len(byName("two")) != 0 {
		t.Errorf("after the rename: three %v, two %v", got, byName("two"))
	}
	taken := "one"
	if _, err := sdk.CloudGateways.UpdateNetwork(ctx, ids[1], components.PatchNetworkRequest{Name: &taken}); err == nil {
		t.Error("a rename to a taken name was accepted")
	}
	if _, err := sdk.CloudGateways.GetNetwork(ctx, ids[0]); err != nil { // ready on the first read
		t.Fatal(err)
	}
	tg := components.CreateCreateTransitGatewayRequestAWSTransitGateway(components.AWSTransitGateway{Name: "tg", CidrBlocks: []string{"10.1.0.0/24"},
		TransitGatewayAttachmentConfig: components.AwsTransitGatewayAttachmentConfig{Kind: components.AWSTransitGatewayAttachmentConfigAWSTransitGatewayAttachmentTypeAwsTransitGatewayAttachment,
			TransitGatewayID: "tgw-1", RAMShareArn: "arn:aws:ram:us-west-2:123456789012:resource-share/1"}})
	created, err := sdk.CloudGateways.CreateTransitGateway(ctx, ids[0], tg)
	if err != nil {
		t.Fatal(err)
	}
	tgID := created.TransitGatewayResponse.AwsTransitGatewayResponse.ID
	name := "tg"
	list, err := sdk.CloudGateways.ListTransitGateways(ctx, operations.ListTransitGatewaysRequest{NetworkID: ids[0],
		Filter: &components.TransitGatewaysFilterParameters{Name: &components.CloudGatewaysStringFieldFilterOverride{Eq: &name}}})
	if err != nil {
		t.Fatal(err)
	}
	if d := list.ListTransitGatewaysResponse.Data; len(d) != 1 || d[0].AwsTransitGatewayResponse == nil || d[0].AwsTransitGatewayResponse.ID != tgID {
		t.Errorf("transit gateways named tg: %+v, want %s", d, tgID)
	}
	if _, err := sdk.CloudGateways.UpdateTransitGateway(ctx, operations.UpdateTransitGatewayRequest{NetworkID: ids[0], TransitGatewayID: tgID,
		PatchTransitGatewayRequest: components.CreatePatchTransitGatewayRequestPatchAWSTransitGatewayAWSTransitGateway(
			components.PatchAWSTransitGatewayAWSTransitGateway{CidrBlocks: []string{"10.2.0.0/24"}})}); err != nil {
		t.Fatal(err)
	}
	if got := sim.CloudGatewayEntity(sim.OrganizationID(token), tgID)["cidr_blocks"]; fmt.Sprint(got) != "[10.2.0.0/24]" {
		t.Errorf("cidr_blocks after the update: %v", got)
	}
}
