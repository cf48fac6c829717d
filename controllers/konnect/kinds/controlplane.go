package kinds

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	"github.com/almproject/alm/controllers/konnect/authconfig"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/kinds/kindbase"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

// ControlPlane is the Kind of KonnectGatewayControlPlane: a Konnect control plane, created or mirrored, and for a
// control plane group its members.
func ControlPlane() entity.Kind[*konnectv1alpha2.KonnectGatewayControlPlane] {
	m := controlPlaneMapping{}
	return entity.Kind[*konnectv1alpha2.KonnectGatewayControlPlane]{
		Mapping:          m,
		Mirror:           m,
		Observe:          m.Observe,
		Parts:            entity.WithParts[*konnectv1alpha2.KonnectGatewayControlPlane, []string](m),
		RecreateWhenGone: true,
	}
}

// controlPlaneMapping adapts KonnectGatewayControlPlane.
type controlPlaneMapping struct{}

func (controlPlaneMapping) Name() string                { return "KonnectGatewayControlPlane" }
func (controlPlaneMapping) Type() konnectapi.EntityType { return konnectapi.TypeControlPlane }
func (controlPlaneMapping) New() *konnectv1alpha2.KonnectGatewayControlPlane {
	return &konnectv1alpha2.KonnectGatewayControlPlane{}
}
func (controlPlaneMapping) NewList() client.ObjectList {
	return &konnectv1alpha2.KonnectGatewayControlPlaneList{}
}
func (controlPlaneMapping) Items(l client.ObjectList) []*konnectv1alpha2.KonnectGatewayControlPlane {
	return kindbase.Pointers(l.(*konnectv1alpha2.KonnectGatewayControlPlaneList).Items)
}

func (controlPlaneMapping) Managed(*konnectv1alpha2.KonnectGatewayControlPlane) bool { return true }

func (controlPlaneMapping) Resolve(ctx context.Context, c client.Reader, cp *konnectv1alpha2.KonnectGatewayControlPlane) (entity.Refs, []entity.RefCheck, error) {
	auth, check, err := kindbase.ResolveAuth(ctx, c, cp.Namespace, cp.Spec.KonnectConfiguration.APIAuthConfigurationRef.Name)
	if err != nil {
		return entity.Refs{}, nil, err
	}
	return entity.Refs{Auth: auth}, []entity.RefCheck{check}, nil
}

// Desired is the control plane to create; a mirror declares nothing (it is only looked up).
func (k controlPlaneMapping) Desired(cp *konnectv1alpha2.KonnectGatewayControlPlane, _ entity.Refs) (map[string]any, error) {
	req := cp.Spec.CreateControlPlaneRequest
	if req == nil {
		return map[string]any{}, nil
	}
	body, err := kindbase.BodyOf(req)
	if err != nil {
		return nil, err
	}
	body["labels"] = kindbase.LabelsToAny(entity.IdentityLabels(k.Name(), cp, req.Labels))
	return body, nil
}

// DriftKeys: a control plane's other fields are immutable or live under "config" in Konnect's answer.
func (controlPlaneMapping) DriftKeys() []string { return []string{"name", "description", "labels"} }

func (controlPlaneMapping) Conditions(cp *konnectv1alpha2.KonnectGatewayControlPlane) *[]metav1.Condition {
	return &cp.Status.Conditions
}

func (controlPlaneMapping) State(cp *konnectv1alpha2.KonnectGatewayControlPlane) entity.State {
	return entity.State{ID: cp.Status.ID, OrgID: cp.Status.OrgID, ServerURL: cp.Status.ServerURL, Sync: cp.Status.SyncStatus}
}

func (controlPlaneMapping) SetState(cp *konnectv1alpha2.KonnectGatewayControlPlane, s entity.State) {
	cp.Status.KonnectEntityStatus = konnectv1alpha1.KonnectEntityStatus{ID: s.ID, OrgID: s.OrgID, ServerURL: s.ServerURL}
	cp.Status.SyncStatus = s.Sync
}

func (controlPlaneMapping) Indexes() []entity.RefIndex {
	return []entity.RefIndex{membersIndex(), {
		Field:  authconfig.IndexControlPlanesByAuth,
		Target: &konnectv1alpha1.KonnectAPIAuthConfiguration{},
		Extract: func(o client.Object) []string {
			return []string{o.(*konnectv1alpha2.KonnectGatewayControlPlane).Spec.KonnectConfiguration.APIAuthConfigurationRef.Name}
		},
	}}
}

// DeletionScope of a control plane is its own auth configuration.
func (controlPlaneMapping) DeletionScope(ctx context.Context, c client.Reader, cp *konnectv1alpha2.KonnectGatewayControlPlane, st entity.State) (*konnectv1alpha1.KonnectAPIAuthConfiguration, string, error) {
	auth, err := kindbase.AuthOf(ctx, c, cp)
	return auth, st.ControlPlaneID, err
}

// What KonnectGatewayControlPlane has beyond the common loop: mirrors, the status Konnect reports, and the
// members of a control plane group.

// ClusterTypeGroup is the cluster type of a control plane group.
const ClusterTypeGroup = "CLUSTER_TYPE_CONTROL_PLANE_GROUP"

func (controlPlaneMapping) MirrorID(cp *konnectv1alpha2.KonnectGatewayControlPlane) string {
	if !cp.Spec.IsMirror() || cp.Spec.Mirror == nil {
		return ""
	}
	return string(cp.Spec.Mirror.Konnect.ID)
}

// Lookup reads the mirrored control plane.
func (controlPlaneMapping) Lookup(ctx context.Context, api konnectapi.API, id string) (konnectapi.Entity, error) {
	return api.GetControlPlane(ctx, id)
}

// Referrers counts the services, routes and consumers that name the control plane.
func (controlPlaneMapping) Referrers(ctx context.Context, c client.Reader, cp *konnectv1alpha2.KonnectGatewayControlPlane) (int, error) {
	n := 0
	for _, list := range []client.ObjectList{
		&configurationv1alpha1.KongServiceList{}, &configurationv1alpha1.KongRouteList{}, &configurationv1.KongConsumerList{},
	} {
		if err := c.List(ctx, list, client.MatchingFields{kindbase.IndexControlPlaneRef: cp.Namespace + "/" + cp.Name}); err != nil {
			return 0, err
		}
		n += apimeta.LenList(list)
	}
	return n, nil
}

// Observe copies the cluster type and the data plane endpoints Konnect reports into the status.
func (controlPlaneMapping) Observe(cp *konnectv1alpha2.KonnectGatewayControlPlane, e konnectapi.Entity) {
	config, _ := e.Body["config"].(map[string]any)
	if config == nil {
		return
	}
	str := func(k string) string { s, _ := config[k].(string); return s }
	cp.Status.ClusterType = str("cluster_type")
	cp.Status.Endpoints = &konnectv1alpha2.KonnectEndpoints{
		ControlPlaneEndpoint: str("control_plane_endpoint"),
		TelemetryEndpoint:    str("telemetry_endpoint"),
	}
}

func isGroup(cp *konnectv1alpha2.KonnectGatewayControlPlane) bool {
	req := cp.Spec.CreateControlPlaneRequest
	return req != nil && req.ClusterType != nil && *req.ClusterType == ClusterTypeGroup
}

// DeclaredParts of a control plane group are its members' Konnect IDs, sorted. Every member must be a
// KonnectGatewayControlPlane of this namespace that exists in Konnect; until then the membership waits.
func (controlPlaneMapping) DeclaredParts(ctx context.Context, c client.Reader, cp *konnectv1alpha2.KonnectGatewayControlPlane) ([]string, bool, []entity.RefCheck, error) {
	check := entity.RefCheck{Type: konnectv1alpha1.ConditionMembersRefValid}
	if !isGroup(cp) {
		check.Absent = true
		return nil, false, []entity.RefCheck{check}, nil
	}
	ids := []string{}
	var missing []string
	for _, m := range cp.Spec.Members {
		member := &konnectv1alpha2.KonnectGatewayControlPlane{}
		err := c.Get(ctx, types.NamespacedName{Namespace: cp.Namespace, Name: m.Name}, member)
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, m.Name+" (not found)")
		case err != nil:
			return nil, false, nil, err
		case !kindbase.CPReady(member):
			missing = append(missing, m.Name+" (not in Konnect yet)")
		default:
			ids = append(ids, member.Status.ID)
		}
	}
	if len(missing) > 0 {
		check.Message = fmt.Sprintf("members of group %s/%s cannot be set yet: KonnectGatewayControlPlane %s", cp.Namespace, cp.Name, strings.Join(missing, ", "))
		return ids, true, []entity.RefCheck{check}, nil
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	names := make([]string, len(cp.Spec.Members))
	for i, m := range cp.Spec.Members {
		names[i] = m.Name
	}
	check.OK, check.Message = true, "members exist in Konnect: "+strings.Join(names, ", ")
	if len(names) == 0 {
		check.Message = "the group has no members"
	}
	return ids, true, []entity.RefCheck{check}, nil
}

// SyncParts makes the group's membership in Konnect the declared one: one list, and one write if it differs.
func (controlPlaneMapping) SyncParts(ctx context.Context, api konnectapi.API, _ entity.Refs, id string, want []string, _ bool) error {
	got, err := api.GroupMembers(ctx, id)
	if err != nil {
		return err
	}
	slices.Sort(got)
	if slices.Equal(slices.Compact(got), want) {
		return nil
	}
	return api.SetGroupMembers(ctx, id, want)
}

func membersIndex() entity.RefIndex {
	return entity.RefIndex{
		Field:  indexMembers,
		Target: &konnectv1alpha2.KonnectGatewayControlPlane{},
		Extract: func(o client.Object) []string {
			cp := o.(*konnectv1alpha2.KonnectGatewayControlPlane)
			names := make([]string, 0, len(cp.Spec.Members))
			for _, m := range cp.Spec.Members {
				names = append(names, m.Name)
			}
			return names
		},
	}
}
