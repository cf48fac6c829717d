package cloudgateway

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"

	sdkkonnectgo "github.com/Kong/sdk-konnect-go"
	"github.com/Kong/sdk-konnect-go/models/components"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cloudv1alpha1 "github.com/almproject/alm/apis/konnect/cloudgateway/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/kinds/kindbase"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

type configurationObj = cloudv1alpha1.KonnectCloudGatewayDataPlaneGroupConfiguration

const (
	indexConfigurationCP      = "konnect.cloudgateway.controlPlaneRef"
	indexConfigurationNetwork = "konnect.cloudgateway.dataplaneGroups.networkRef"
)

// configurationKind: a control plane's one configuration. It is Programmed once Konnect has it (as in Kong's
// operator); status.dataplane_groups carries each group's state, read again after Poll while one is not ready. A
// changed spec (a generation Programmed has not seen) is put again; deleting puts an empty configuration.
func configurationKind() kind[*configurationObj] {
	return kind[*configurationObj]{
		name:    "konnectcloudgatewaydataplanegroupconfiguration",
		newObj:  func() *configurationObj { return &configurationObj{} },
		newList: func() client.ObjectList { return &cloudv1alpha1.KonnectCloudGatewayDataPlaneGroupConfigurationList{} },
		items: func(l client.ObjectList) []client.Object {
			return objects(kindbase.Pointers(l.(*cloudv1alpha1.KonnectCloudGatewayDataPlaneGroupConfigurationList).Items))
		},
		conds: func(c *configurationObj) *[]metav1.Condition { return &c.Status.Conditions },
		id:    func(c *configurationObj) string { return c.Status.ID },
		record: func(c *configurationObj, es konnectv1alpha1.KonnectEntityStatus, parent string, o *observed) {
			c.Status.KonnectEntityStatus, c.Status.ControlPlaneID = es, parent
			if o != nil {
				c.Status.DataPlaneGroups, _ = o.Body.([]cloudv1alpha1.KonnectCloudGatewayDataPlaneGroupConfigurationStatusGroup)
			}
		},
		resolve: resolveConfiguration,
		deletion: func(ctx context.Context, cl client.Reader, c *configurationObj) (scope, error) {
			refs, checks, err := kindbase.ResolveControlPlane(ctx, cl, "KonnectCloudGatewayDataPlaneGroupConfiguration", c.Namespace, &c.Spec.ControlPlaneRef)
			if err != nil || len(checks) < 2 || !checks[1].OK {
				return scope{}, err // the control plane, and with it its configuration, is gone
			}
			return scope{auth: refs.Auth, parent: refs.ControlPlaneID}, nil
		},
		create: func(ctx context.Context, api konnectapi.API, c *configurationObj, s scope) (observed, error) {
			return putConfiguration(ctx, api, s, configurationRequest(c, s))
		},
		get: func(ctx context.Context, api konnectapi.API, c *configurationObj, s scope) (observed, error) {
			if p := apimeta.FindStatusCondition(c.Status.Conditions, konnectv1alpha1.ConditionProgrammed); p == nil || p.ObservedGeneration != c.Generation {
				return putConfiguration(ctx, api, s, configurationRequest(c, s))
			}
			return readConfiguration(ctx, api, c, s)
		},
		read:  readConfiguration,
		drift: configurationDrift,
		update: func(ctx context.Context, api konnectapi.API, c *configurationObj, s scope) (observed, error) {
			return putConfiguration(ctx, api, s, configurationRequest(c, s))
		},
		del: func(ctx context.Context, api konnectapi.API, c *configurationObj, s scope) error {
			req := configurationRequest(c, s)
			req.DataplaneGroups = []components.CreateConfigurationDataPlaneGroup{}
			_, err := putConfiguration(ctx, api, s, req)
			return err
		},
		watches: []refWatch{
			{target: &konnectv1alpha2.KonnectGatewayControlPlane{}, index: indexConfigurationCP, extract: func(o client.Object) []string {
				if name := kindbase.CPRefName(&o.(*configurationObj).Spec.ControlPlaneRef); name != "" {
					return []string{name}
				}
				return nil
			}},
			{target: &networkObj{}, index: indexConfigurationNetwork, extract: func(o client.Object) []string {
				var names []string
				for _, g := range o.(*configurationObj).Spec.DataplaneGroups {
					names = append(names, refName(g.NetworkRef)...)
				}
				return names
			}},
		},
	}
}

// resolveConfiguration: the control plane and its auth configuration, then every network the groups name (ready).
func resolveConfiguration(ctx context.Context, cl client.Reader, c *configurationObj) (scope, []entity.RefCheck, error) {
	refs, checks, err := kindbase.ResolveControlPlane(ctx, cl, "KonnectCloudGatewayDataPlaneGroupConfiguration", c.Namespace, &c.Spec.ControlPlaneRef)
	if err != nil || !allOK(checks) {
		return scope{}, checks, err
	}
	s := scope{auth: refs.Auth, parent: refs.ControlPlaneID, networks: map[string]string{}}
	for _, g := range c.Spec.DataplaneGroups {
		if g.NetworkRef.Type == cloudv1alpha1.ObjectRefKonnectID && g.NetworkRef.KonnectID != nil {
			continue
		}
		ns, netChecks, err := resolveNetwork(ctx, cl, c.Namespace, g.NetworkRef)
		if err != nil || !netChecks[0].OK {
			return scope{}, append(checks, netChecks[0]), err
		}
		s.networks[g.NetworkRef.NamespacedRef.Name] = ns.parent
	}
	names := make([]string, 0, len(s.networks))
	for name := range s.networks {
		names = append(names, name)
	}
	return s, append(checks, entity.RefCheck{Type: ConditionNetworkRefValid, OK: true, Message: "networks ready in Konnect: " + strings.Join(names, ", ")}), nil
}

func allOK(checks []entity.RefCheck) bool {
	for _, c := range checks {
		if !c.OK {
			return false
		}
	}
	return len(checks) > 0
}

// configurationRequest is the configuration Konnect is to have. The control plane geo is the region of the
// Konnect server (us.api.konghq.com: us); a server elsewhere (the simulator, a proxy) counts as us.
func configurationRequest(c *configurationObj, s scope) components.CreateConfigurationRequest {
	geo := "us"
	server := s.auth.Spec.ServerURL
	if !strings.Contains(server, "://") {
		server = "https://" + server
	}
	if u, err := url.Parse(server); err == nil && strings.HasSuffix(u.Hostname(), ".api.konghq.com") {
		geo = strings.TrimSuffix(u.Hostname(), ".api.konghq.com")
	}
	req := components.CreateConfigurationRequest{
		ControlPlaneID: s.parent, ControlPlaneGeo: components.ControlPlaneGeo(geo), Version: &c.Spec.Version,
		DataplaneGroups: []components.CreateConfigurationDataPlaneGroup{},
	}
	if c.Spec.APIAccess != nil {
		req.APIAccess = (*components.APIAccess)(c.Spec.APIAccess)
	}
	for _, g := range c.Spec.DataplaneGroups {
		req.DataplaneGroups = append(req.DataplaneGroups, dataPlaneGroup(g, s))
	}
	return req
}

func dataPlaneGroup(g cloudv1alpha1.KonnectConfigurationDataPlaneGroup, s scope) components.CreateConfigurationDataPlaneGroup {
	out := components.CreateConfigurationDataPlaneGroup{Provider: components.ProviderName(g.Provider), Region: g.Region}
	if g.NetworkRef.Type == cloudv1alpha1.ObjectRefKonnectID && g.NetworkRef.KonnectID != nil {
		out.CloudGatewayNetworkID = g.NetworkRef.KonnectID
	} else if id := s.networks[g.NetworkRef.NamespacedRef.Name]; id != "" {
		out.CloudGatewayNetworkID = &id
	}
	var auto components.ConfigurationDataPlaneGroupAutoscale
	if a := g.Autoscale.Static; g.Autoscale.Type == "static" && a != nil {
		//nolint:staticcheck // deprecated in the SDK, but Dedicated Cloud Gateways still take static instances (Kong's samples use them).
		auto = components.CreateConfigurationDataPlaneGroupAutoscaleConfigurationDataPlaneGroupAutoscaleStatic(components.ConfigurationDataPlaneGroupAutoscaleStatic{
			Kind: components.KindStatic, InstanceType: components.InstanceTypeName(a.InstanceType), RequestedInstances: a.RequestedInstances})
	} else if a := g.Autoscale.Autopilot; a != nil {
		auto = components.CreateConfigurationDataPlaneGroupAutoscaleConfigurationDataPlaneGroupAutoscaleAutopilot(components.ConfigurationDataPlaneGroupAutoscaleAutopilot{
			Kind: components.ConfigurationDataPlaneGroupAutoscaleAutopilotKindAutopilot, BaseRps: a.BaseRps, MaxRps: a.MaxRps})
	}
	out.Autoscale = &auto
	for _, e := range g.Environment {
		out.Environment = append(out.Environment, components.ConfigurationDataPlaneGroupEnvironmentField{Name: e.Name, Value: e.Value})
	}
	return out
}

func putConfiguration(ctx context.Context, api konnectapi.API, _ scope, req components.CreateConfigurationRequest) (observed, error) {
	var out observed
	err := konnectapi.CallSDK(ctx, api, "put cloud gateway configuration", func(ctx context.Context, sdk *sdkkonnectgo.SDK) error {
		resp, err := sdk.CloudGateways.CreateConfiguration(ctx, req)
		if err != nil {
			return err
		}
		out, err = configurationObserved(resp.ConfigurationManifest)
		return err
	})
	return out, err
}

// configurationObserved: the configuration is Programmed once it exists; Pending while a group is not ready.
func configurationObserved(m *components.ConfigurationManifest) (observed, error) {
	if m == nil {
		return observed{}, fmt.Errorf("no configuration in the answer")
	}
	groups := []cloudv1alpha1.KonnectCloudGatewayDataPlaneGroupConfigurationStatusGroup{}
	ready := 0
	for _, g := range m.DataplaneGroups {
		sg := cloudv1alpha1.KonnectCloudGatewayDataPlaneGroupConfigurationStatusGroup{
			ID: g.ID, Provider: string(g.Provider), Region: g.Region, State: string(g.State)}
		if g.CloudGatewayNetworkID != nil {
			sg.CloudGatewayNetworkID = *g.CloudGatewayNetworkID
		}
		if sg.State == StateReady {
			ready++
		}
		groups = append(groups, sg)
	}
	return observed{ID: m.ID, Entity: m, State: fmt.Sprintf("configured (%d of %d data plane groups ready)", ready, len(groups)),
		Ready: true, Pending: ready < len(groups), Body: groups}, nil
}

func readConfiguration(ctx context.Context, api konnectapi.API, c *configurationObj, _ scope) (observed, error) {
	var out observed
	err := konnectapi.CallSDK(ctx, api, "get cloud gateway configuration", func(ctx context.Context, sdk *sdkkonnectgo.SDK) error {
		resp, err := sdk.CloudGateways.GetConfiguration(ctx, c.Status.ID)
		if err != nil {
			return err
		}
		out, err = configurationObserved(resp.ConfigurationManifest)
		return err
	})
	return out, err
}

// configurationDrift compares an adopted configuration with the spec: its control plane cannot change; its version,
// api_access and data plane groups (provider, region, network) are put.
func configurationDrift(c *configurationObj, actual observed, s scope) differences {
	var d differences
	m, ok := actual.Entity.(*components.ConfigurationManifest)
	if !ok {
		return d
	}
	if m.ControlPlaneID != s.parent {
		d.immutable = append(d.immutable, "control_plane_id")
	}
	want := configurationRequest(c, s)
	if m.Version == nil || *m.Version != *want.Version {
		d.updatable = append(d.updatable, "version")
	}
	if want.APIAccess != nil && (m.APIAccess == nil || *m.APIAccess != *want.APIAccess) {
		d.updatable = append(d.updatable, "api_access")
	}
	var got, wanted []string
	for _, g := range m.DataplaneGroups {
		got = append(got, fmt.Sprintf("%s/%s/%s", g.Provider, g.Region, deref(g.CloudGatewayNetworkID)))
	}
	for _, g := range want.DataplaneGroups {
		wanted = append(wanted, fmt.Sprintf("%s/%s/%s", g.Provider, g.Region, deref(g.CloudGatewayNetworkID)))
	}
	slices.Sort(got)
	slices.Sort(wanted)
	if !slices.Equal(got, wanted) {
		d.updatable = append(d.updatable, "dataplane_groups")
	}
	return d
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
