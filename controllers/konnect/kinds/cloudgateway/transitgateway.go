package cloudgateway

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	sdkkonnectgo "github.com/Kong/sdk-konnect-go"
	"github.com/Kong/sdk-konnect-go/models/components"
	"github.com/Kong/sdk-konnect-go/models/operations"
	"github.com/Kong/sdk-konnect-go/retry"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cloudv1alpha1 "github.com/almproject/alm/apis/konnect/cloudgateway/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/kinds/kindbase"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

type transitGatewayObj = cloudv1alpha1.KonnectCloudGatewayTransitGateway

// ConditionNetworkRefValid is True when the referenced KonnectCloudGatewayNetwork is ready in Konnect.
const ConditionNetworkRefValid = "NetworkRefValid"

const indexTransitGatewayNetwork = "konnect.cloudgateway.networkRef"

func transitGatewayKind() kind[*transitGatewayObj] {
	return kind[*transitGatewayObj]{
		name:    "konnectcloudgatewaytransitgateway",
		newObj:  func() *transitGatewayObj { return &transitGatewayObj{} },
		newList: func() client.ObjectList { return &cloudv1alpha1.KonnectCloudGatewayTransitGatewayList{} },
		items: func(l client.ObjectList) []client.Object {
			return objects(kindbase.Pointers(l.(*cloudv1alpha1.KonnectCloudGatewayTransitGatewayList).Items))
		},
		conds: func(t *transitGatewayObj) *[]metav1.Condition { return &t.Status.Conditions },
		id:    func(t *transitGatewayObj) string { return t.Status.ID },
		record: func(t *transitGatewayObj, es konnectv1alpha1.KonnectEntityStatus, parent string, o *observed) {
			t.Status.KonnectEntityStatus, t.Status.NetworkID, t.Status.State = es, parent, ""
			if o != nil {
				t.Status.State = o.State
			}
		},
		resolve: func(ctx context.Context, c client.Reader, t *transitGatewayObj) (scope, []entity.RefCheck, error) {
			return resolveNetwork(ctx, c, t.Namespace, t.Spec.NetworkRef)
		},
		deletion: func(ctx context.Context, c client.Reader, t *transitGatewayObj) (scope, error) {
			s, checks, err := resolveNetwork(ctx, c, t.Namespace, t.Spec.NetworkRef)
			if err != nil || len(checks) < 2 || !checks[1].OK || t.Status.NetworkID == "" {
				// The network (and with it its transit gateways) or its auth configuration is gone.
				return scope{}, err
			}
			return scope{auth: s.auth, parent: t.Status.NetworkID}, nil
		},
		create: createTransitGateway,
		get:    getTransitGateway,
		lookup: lookupTransitGateway,
		drift:  transitGatewayDrift,
		update: updateTransitGateway,
		del: func(ctx context.Context, api konnectapi.API, t *transitGatewayObj, s scope) error {
			return konnectapi.CallSDK(ctx, api, "delete cloud gateway transit gateway", func(ctx context.Context, sdk *sdkkonnectgo.SDK) error {
				_, err := sdk.CloudGateways.DeleteTransitGateway(ctx, s.parent, t.Status.ID)
				return err
			})
		},
		watches: []refWatch{{target: &networkObj{}, index: indexTransitGatewayNetwork, extract: func(o client.Object) []string {
			return refName(o.(*transitGatewayObj).Spec.NetworkRef)
		}}},
	}
}

func refName(ref cloudv1alpha1.ObjectRef) []string {
	if ref.Type != cloudv1alpha1.ObjectRefNamespacedRef || ref.NamespacedRef == nil {
		return nil
	}
	return []string{ref.NamespacedRef.Name}
}

// resolveNetwork checks that the network ref names exists and is ready in Konnect, then its auth configuration.
func resolveNetwork(ctx context.Context, c client.Reader, namespace string, ref cloudv1alpha1.ObjectRef) (scope, []entity.RefCheck, error) {
	check := entity.RefCheck{Type: ConditionNetworkRefValid}
	names := refName(ref)
	if len(names) == 0 {
		check.Message = "networkRef must be of type namespacedRef with a name"
		return scope{}, []entity.RefCheck{check}, nil
	}
	n := &networkObj{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: names[0]}, n); err != nil {
		if apierrors.IsNotFound(err) {
			check.Message = fmt.Sprintf("KonnectCloudGatewayNetwork %s/%s not found", namespace, names[0])
			return scope{}, []entity.RefCheck{check}, nil
		}
		return scope{}, nil, err
	}
	if n.Status.ID == "" || n.Status.State != StateReady {
		check.Message = fmt.Sprintf("KonnectCloudGatewayNetwork %s/%s is not ready in Konnect yet (state %q)", namespace, names[0], n.Status.State)
		return scope{}, []entity.RefCheck{check}, nil
	}
	check.OK, check.Message = true, fmt.Sprintf("KonnectCloudGatewayNetwork %s/%s is ready in Konnect", namespace, names[0])
	auth, authCheck, err := kindbase.ResolveAuth(ctx, c, namespace, n.Spec.KonnectConfiguration.APIAuthConfigurationRef.Name)
	return scope{auth: auth, parent: n.Status.ID}, []entity.RefCheck{check, authCheck}, err
}

func createTransitGateway(ctx context.Context, api konnectapi.API, t *transitGatewayObj, s scope) (observed, error) {
	req, err := transitGatewayRequest(t.Spec.KonnectTransitGatewayAPISpec)
	if err != nil {
		return observed{}, err
	}
	var out observed
	err = konnectapi.CallSDK(ctx, api, "create cloud gateway transit gateway", func(ctx context.Context, sdk *sdkkonnectgo.SDK) error {
		// The SDK retries a 400 of this call for up to an hour (Konnect answers 400 while the network is not
		// ready); a worker must not block on it: the object is reconciled again with backoff instead.
		resp, err := sdk.CloudGateways.CreateTransitGateway(ctx, s.parent, req, operations.WithRetries(retry.Config{Strategy: "none"}))
		if err != nil {
			return err
		}
		out, err = stateOf(resp.TransitGatewayResponse)
		return err
	})
	return out, err
}

func transitGatewayRequest(spec cloudv1alpha1.KonnectTransitGatewayAPISpec) (components.CreateTransitGatewayRequest, error) {
	switch {
	case spec.Type == cloudv1alpha1.TransitGatewayTypeAWSTransitGateway && spec.AWSTransitGateway != nil:
		g := spec.AWSTransitGateway
		return components.CreateCreateTransitGatewayRequestAWSTransitGateway(components.AWSTransitGateway{
			Name: g.Name, DNSConfig: dnsConfig(g.DNSConfig), CidrBlocks: g.CIDRBlocks,
			TransitGatewayAttachmentConfig: components.AwsTransitGatewayAttachmentConfig{
				Kind:             components.AWSTransitGatewayAttachmentConfigAWSTransitGatewayAttachmentTypeAwsTransitGatewayAttachment,
				TransitGatewayID: g.AttachmentConfig.TransitGatewayID, RAMShareArn: g.AttachmentConfig.RAMShareArn,
			},
		}), nil
	case spec.Type == cloudv1alpha1.TransitGatewayTypeAzureTransitGateway && spec.AzureTransitGateway != nil:
		g := spec.AzureTransitGateway
		return components.CreateCreateTransitGatewayRequestAzureTransitGateway(components.AzureTransitGateway{
			Name: g.Name, DNSConfig: dnsConfig(g.DNSConfig),
			TransitGatewayAttachmentConfig: components.AzureVNETPeeringAttachmentConfig{
				Kind:     components.AzureVNETPeeringAttachmentTypeAzureVnetPeeringAttachment,
				TenantID: g.AttachmentConfig.TenantID, SubscriptionID: g.AttachmentConfig.SubscriptionID,
				ResourceGroupName: g.AttachmentConfig.ResourceGroupName, VnetName: g.AttachmentConfig.VnetName,
			},
		}), nil
	}
	return components.CreateTransitGatewayRequest{}, fmt.Errorf("spec.type %s needs its configuration", spec.Type)
}

func dnsConfig(in []cloudv1alpha1.TransitGatewayDNSConfig) []components.TransitGatewayDNSConfig {
	out := make([]components.TransitGatewayDNSConfig, 0, len(in))
	for _, d := range in {
		out = append(out, components.TransitGatewayDNSConfig{RemoteDNSServerIPAddresses: d.RemoteDNSServerIPAddresses, DomainProxyList: d.DomainProxyList})
	}
	return out
}

func getTransitGateway(ctx context.Context, api konnectapi.API, t *transitGatewayObj, s scope) (observed, error) {
	var out observed
	err := konnectapi.CallSDK(ctx, api, "get cloud gateway transit gateway", func(ctx context.Context, sdk *sdkkonnectgo.SDK) error {
		resp, err := sdk.CloudGateways.GetTransitGateway(ctx, s.parent, t.Status.ID)
		if err != nil {
			return err
		}
		out, err = stateOf(resp.TransitGatewayResponse)
		return err
	})
	return out, err
}

// transitGatewayName is the name in the spec's configuration of its type.
func transitGatewayName(spec cloudv1alpha1.KonnectTransitGatewayAPISpec) string {
	switch {
	case spec.AWSTransitGateway != nil:
		return spec.AWSTransitGateway.Name
	case spec.AzureTransitGateway != nil:
		return spec.AzureTransitGateway.Name
	}
	return ""
}

// lookupTransitGateway finds the network's transit gateway of the spec's name (list-transit-gateways with
// filter[name][eq]): the one a create whose answer was lost made.
func lookupTransitGateway(ctx context.Context, api konnectapi.API, t *transitGatewayObj, s scope) (observed, bool, error) {
	name := transitGatewayName(t.Spec.KonnectTransitGatewayAPISpec)
	var out observed
	var found bool
	err := konnectapi.CallSDK(ctx, api, "list cloud gateway transit gateway", func(ctx context.Context, sdk *sdkkonnectgo.SDK) error {
		resp, err := sdk.CloudGateways.ListTransitGateways(ctx, operations.ListTransitGatewaysRequest{NetworkID: s.parent,
			Filter: &components.TransitGatewaysFilterParameters{Name: &components.CloudGatewaysStringFieldFilterOverride{Eq: &name}}})
		if err != nil || resp.ListTransitGatewaysResponse == nil {
			return err
		}
		for _, tg := range resp.ListTransitGatewaysResponse.Data {
			o, err := stateOf(tg)
			if err != nil {
				return err
			}
			if o.Name == name {
				out, found = o, true
				return nil
			}
		}
		return nil
	})
	return out, found, err
}

// transitGatewayDrift: Konnect's update-transit-gateway changes an AWS transit gateway's cidr_blocks; its name, DNS
// configuration and attachment (and everything of an Azure one) cannot change.
func transitGatewayDrift(t *transitGatewayObj, actual observed, _ scope) differences {
	var d differences
	got, ok := actual.Entity.(map[string]any)
	req, err := transitGatewayRequest(t.Spec.KonnectTransitGatewayAPISpec)
	if !ok || err != nil {
		return d
	}
	raw, err := json.Marshal(req)
	var want map[string]any
	if err != nil || json.Unmarshal(raw, &want) != nil {
		return d
	}
	for _, k := range []string{"name", "dns_config", "transit_gateway_attachment_config", "cidr_blocks"} {
		w, g := want[k], got[k]
		if k == "dns_config" && isEmptyList(w) && isEmptyList(g) || reflect.DeepEqual(w, g) {
			continue
		}
		if k == "cidr_blocks" && t.Spec.Type == cloudv1alpha1.TransitGatewayTypeAWSTransitGateway {
			d.updatable = append(d.updatable, "awsTransitGateway.cidr_blocks")
			continue
		}
		d.immutable = append(d.immutable, k)
	}
	return d
}

func isEmptyList(v any) bool {
	l, ok := v.([]any)
	return v == nil || ok && len(l) == 0
}

// updateTransitGateway sends an AWS transit gateway's cidr_blocks (update-transit-gateway).
func updateTransitGateway(ctx context.Context, api konnectapi.API, t *transitGatewayObj, s scope) (observed, error) {
	g := t.Spec.AWSTransitGateway
	if g == nil {
		return observed{}, fmt.Errorf("spec.type %s: Konnect cannot update the transit gateway", t.Spec.Type)
	}
	var out observed
	err := konnectapi.CallSDK(ctx, api, "update cloud gateway transit gateway", func(ctx context.Context, sdk *sdkkonnectgo.SDK) error {
		resp, err := sdk.CloudGateways.UpdateTransitGateway(ctx, operations.UpdateTransitGatewayRequest{NetworkID: s.parent, TransitGatewayID: t.Status.ID,
			PatchTransitGatewayRequest: components.CreatePatchTransitGatewayRequestPatchAWSTransitGatewayAWSTransitGateway(
				components.PatchAWSTransitGatewayAWSTransitGateway{CidrBlocks: g.CIDRBlocks})})
		if err != nil {
			return err
		}
		out, err = stateOf(resp.PatchTransitGatewayResponse)
		return err
	})
	return out, err
}
