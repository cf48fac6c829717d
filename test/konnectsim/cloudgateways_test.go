package konnectsim_test

import (
	"context"
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
