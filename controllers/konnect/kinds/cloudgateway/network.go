// Package cloudgateway holds the Dedicated Cloud Gateway kinds (Kong's operator's KonnectCloudGatewayNetwork,
// KonnectCloudGatewayTransitGateway and KonnectCloudGatewayDataPlaneGroupConfiguration): entities Konnect
// provisions in a cloud provider, which takes minutes. Their loop (reconciler.go) differs from the generic one
// (entity) in what Programmed means: the entity is created at once, but a network or transit gateway is Programmed
// only once Konnect reports it ready; until then the Programmed condition carries its state (reason Provisioning),
// and it is read again after Poll. Each read is one GET through the organization's rate gate at read priority
// (konnectapi), so a wait of many entities takes its share of the budget behind writes instead of a tight poll. A
// failed provisioning (Konnect's state_metadata names a reason) is reported with that reason (ProvisioningFailed)
// and read again once a sync period.
package cloudgateway

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	sdkkonnectgo "github.com/Kong/sdk-konnect-go"
	"github.com/Kong/sdk-konnect-go/models/components"
	"github.com/Kong/sdk-konnect-go/models/operations"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cloudv1alpha1 "github.com/almproject/alm/apis/konnect/cloudgateway/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/kinds/kindbase"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

// +kubebuilder:rbac:groups=konnect.konghq.com,resources=konnectcloudgatewaynetworks;konnectcloudgatewaytransitgateways;konnectcloudgatewaydataplanegroupconfigurations,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=konnect.konghq.com,resources=konnectcloudgatewaynetworks/status;konnectcloudgatewaytransitgateways/status;konnectcloudgatewaydataplanegroupconfigurations/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=konnect.konghq.com,resources=konnectcloudgatewaynetworks/finalizers;konnectcloudgatewaytransitgateways/finalizers;konnectcloudgatewaydataplanegroupconfigurations/finalizers,verbs=update

type networkObj = cloudv1alpha1.KonnectCloudGatewayNetwork

// indexNetworkAuth finds the networks that use a KonnectAPIAuthConfiguration.
const indexNetworkAuth = "konnect.cloudgateway.authRef"

func networkKind() kind[*networkObj] {
	return kind[*networkObj]{
		name:    "konnectcloudgatewaynetwork",
		newObj:  func() *networkObj { return &networkObj{} },
		newList: func() client.ObjectList { return &cloudv1alpha1.KonnectCloudGatewayNetworkList{} },
		items: func(l client.ObjectList) []client.Object {
			return objects(kindbase.Pointers(l.(*cloudv1alpha1.KonnectCloudGatewayNetworkList).Items))
		},
		conds: func(n *networkObj) *[]metav1.Condition { return &n.Status.Conditions },
		id:    func(n *networkObj) string { return n.Status.ID },
		record: func(n *networkObj, es konnectv1alpha1.KonnectEntityStatus, _ string, o *observed) {
			n.Status.KonnectEntityStatus, n.Status.State = es, ""
			if o != nil {
				n.Status.State = o.State
			}
		},
		resolve: func(ctx context.Context, c client.Reader, n *networkObj) (scope, []entity.RefCheck, error) {
			auth, check, err := kindbase.ResolveAuth(ctx, c, n.Namespace, n.Spec.KonnectConfiguration.APIAuthConfigurationRef.Name)
			return scope{auth: auth}, []entity.RefCheck{check}, err
		},
		deletion: func(ctx context.Context, c client.Reader, n *networkObj) (scope, error) {
			auth, check, err := kindbase.ResolveAuth(ctx, c, n.Namespace, n.Spec.KonnectConfiguration.APIAuthConfigurationRef.Name)
			if !check.OK {
				auth = nil
			}
			return scope{auth: auth}, err
		},
		create: createNetwork,
		get:    getNetwork,
		lookup: lookupNetwork,
		drift:  networkDrift,
		update: updateNetwork,
		del: func(ctx context.Context, api konnectapi.API, n *networkObj, _ scope) error {
			return konnectapi.CallSDK(ctx, api, "delete cloud gateway network", func(ctx context.Context, sdk *sdkkonnectgo.SDK) error {
				_, err := sdk.CloudGateways.DeleteNetwork(ctx, n.Status.ID)
				return err
			})
		},
		watches: []refWatch{{target: &konnectv1alpha1.KonnectAPIAuthConfiguration{}, index: indexNetworkAuth, extract: func(o client.Object) []string {
			return []string{o.(*networkObj).Spec.KonnectConfiguration.APIAuthConfigurationRef.Name}
		}}},
	}
}

func objects[E client.Object](items []E) []client.Object {
	out := make([]client.Object, len(items))
	for i, item := range items {
		out[i] = item
	}
	return out
}

func createNetwork(ctx context.Context, api konnectapi.API, n *networkObj, _ scope) (observed, error) {
	req := components.CreateNetworkRequest{
		Name: n.Spec.Name, CloudGatewayProviderAccountID: n.Spec.CloudGatewayProviderAccountID, Region: n.Spec.Region,
		AvailabilityZones: n.Spec.AvailabilityZones, CidrBlock: n.Spec.CidrBlock,
	}
	if n.Spec.State != nil {
		s := components.NetworkCreateState(*n.Spec.State)
		req.State = &s
	}
	var out observed
	err := konnectapi.CallSDK(ctx, api, "create cloud gateway network", func(ctx context.Context, sdk *sdkkonnectgo.SDK) error {
		resp, err := sdk.CloudGateways.CreateNetwork(ctx, req)
		if err != nil {
			return err
		}
		out, err = networkObserved(resp.Network)
		return err
	})
	return out, err
}

func getNetwork(ctx context.Context, api konnectapi.API, n *networkObj, _ scope) (observed, error) {
	var out observed
	err := konnectapi.CallSDK(ctx, api, "get cloud gateway network", func(ctx context.Context, sdk *sdkkonnectgo.SDK) error {
		resp, err := sdk.CloudGateways.GetNetwork(ctx, n.Status.ID)
		if err != nil {
			return err
		}
		out, err = networkObserved(resp.Network)
		return err
	})
	return out, err
}

func networkObserved(net *components.Network) (observed, error) {
	if net == nil {
		return observed{}, fmt.Errorf("no network in the answer")
	}
	o := observed{ID: net.ID, Name: net.Name, State: string(net.State), Ready: net.State == StateReady, Entity: net}
	if m := net.StateMetadata; m != nil && m.Reason != nil && !o.Ready {
		o.Failed = *m.Reason
	}
	return o, nil
}

// lookupNetwork finds the network of the spec's name (list-networks with filter[name][eq]; names are unique in an
// organization): the one a create whose answer was lost made.
func lookupNetwork(ctx context.Context, api konnectapi.API, n *networkObj, _ scope) (observed, bool, error) {
	var out observed
	var found bool
	err := konnectapi.CallSDK(ctx, api, "list cloud gateway network", func(ctx context.Context, sdk *sdkkonnectgo.SDK) error {
		resp, err := sdk.CloudGateways.ListNetworks(ctx, operations.ListNetworksRequest{
			Filter: &components.NetworksFilterParameters{Name: &components.CloudGatewaysStringFieldFilterOverride{Eq: &n.Spec.Name}}})
		if err != nil || resp.ListNetworksResponse == nil {
			return err
		}
		for i := range resp.ListNetworksResponse.Data {
			if net := &resp.ListNetworksResponse.Data[i]; net.Name == n.Spec.Name {
				found = true
				out, err = networkObserved(net)
				return err
			}
		}
		return nil
	})
	return out, found, err
}

// networkDrift: Konnect renames a network (update-network); its provider account, region, zones and CIDR block
// cannot change.
func networkDrift(n *networkObj, actual observed, _ scope) differences {
	var d differences
	net, ok := actual.Entity.(*components.Network)
	if !ok {
		return d
	}
	if net.Name != n.Spec.Name {
		d.updatable = append(d.updatable, "name")
	}
	zones := slices.Clone(net.AvailabilityZones)
	want := slices.Clone(n.Spec.AvailabilityZones)
	slices.Sort(zones)
	slices.Sort(want)
	for _, f := range []struct {
		field string
		same  bool
	}{
		{"cloud_gateway_provider_account_id", net.CloudGatewayProviderAccountID == n.Spec.CloudGatewayProviderAccountID},
		{"region", net.Region == n.Spec.Region},
		{"availability_zones", slices.Equal(zones, want)},
		{"cidr_block", net.CidrBlock == n.Spec.CidrBlock},
	} {
		if !f.same {
			d.immutable = append(d.immutable, f.field)
		}
	}
	return d
}

// updateNetwork renames the network to spec.name.
func updateNetwork(ctx context.Context, api konnectapi.API, n *networkObj, _ scope) (observed, error) {
	var out observed
	err := konnectapi.CallSDK(ctx, api, "update cloud gateway network", func(ctx context.Context, sdk *sdkkonnectgo.SDK) error {
		resp, err := sdk.CloudGateways.UpdateNetwork(ctx, n.Status.ID, components.PatchNetworkRequest{Name: &n.Spec.Name})
		if err != nil {
			return err
		}
		out, err = networkObserved(resp.Network)
		return err
	})
	return out, err
}

// stateOf reads id, state and state_metadata.reason of an answer the SDK holds as a union (a transit gateway).
func stateOf(v any) (observed, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return observed{}, err
	}
	var body struct {
		ID            string `json:"id"`
		Name          string `json:"name"`
		State         string `json:"state"`
		StateMetadata *struct {
			Reason string `json:"reason"`
		} `json:"state_metadata"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return observed{}, fmt.Errorf("reading the answer: %w", err)
	}
	if body.ID == "" {
		return observed{}, fmt.Errorf("no entity in the answer")
	}
	var entity map[string]any
	if err := json.Unmarshal(raw, &entity); err != nil {
		return observed{}, fmt.Errorf("reading the answer: %w", err)
	}
	o := observed{ID: body.ID, Name: body.Name, State: body.State, Ready: body.State == StateReady, Entity: entity}
	if body.StateMetadata != nil && !o.Ready {
		o.Failed = body.StateMetadata.Reason
	}
	return o, nil
}
