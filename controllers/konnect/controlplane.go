package konnect

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
)

// What KonnectGatewayControlPlane has beyond the common loop: mirrors, the status Konnect reports, and the
// members of a control plane group.

const clusterTypeGroup = "CLUSTER_TYPE_CONTROL_PLANE_GROUP"

func (ControlPlaneKind) MirrorID(cp *konnectv1alpha2.KonnectGatewayControlPlane) string {
	if !cp.Spec.IsMirror() || cp.Spec.Mirror == nil {
		return ""
	}
	return string(cp.Spec.Mirror.Konnect.ID)
}

// Referrers counts the services, routes and consumers that name the control plane.
func (ControlPlaneKind) Referrers(ctx context.Context, c client.Reader, cp *konnectv1alpha2.KonnectGatewayControlPlane) (int, error) {
	n := 0
	for _, list := range []client.ObjectList{
		&configurationv1alpha1.KongServiceList{}, &configurationv1alpha1.KongRouteList{}, &configurationv1.KongConsumerList{},
	} {
		if err := c.List(ctx, list, client.InNamespace(cp.Namespace), client.MatchingFields{indexControlPlaneRef: cp.Name}); err != nil {
			return 0, err
		}
		n += apimeta.LenList(list)
	}
	return n, nil
}

// Observe copies the cluster type and the data plane endpoints Konnect reports into the status.
func (ControlPlaneKind) Observe(cp *konnectv1alpha2.KonnectGatewayControlPlane, e Entity) {
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
	return req != nil && req.ClusterType != nil && *req.ClusterType == clusterTypeGroup
}

// Parts of a control plane group are its members' Konnect IDs, sorted. Every member must be a
// KonnectGatewayControlPlane of this namespace that exists in Konnect; until then the membership waits.
func (ControlPlaneKind) Parts(ctx context.Context, c client.Reader, cp *konnectv1alpha2.KonnectGatewayControlPlane) (any, []RefCheck, error) {
	check := RefCheck{Type: konnectv1alpha1.ConditionMembersRefValid}
	if !isGroup(cp) {
		check.Absent = true
		return nil, []RefCheck{check}, nil
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
			return nil, nil, err
		case !cpReady(member):
			missing = append(missing, m.Name+" (not in Konnect yet)")
		default:
			ids = append(ids, member.Status.ID)
		}
	}
	if len(missing) > 0 {
		check.Message = fmt.Sprintf("members of group %s/%s cannot be set yet: KonnectGatewayControlPlane %s", cp.Namespace, cp.Name, strings.Join(missing, ", "))
		return ids, []RefCheck{check}, nil
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
	return ids, []RefCheck{check}, nil
}

// SyncParts makes the group's membership in Konnect the declared one: one list, and one write if it differs.
func (ControlPlaneKind) SyncParts(ctx context.Context, api API, _ Refs, id string, parts any, _ bool) error {
	want := parts.([]string)
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

func membersIndex() RefIndex {
	return RefIndex{
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
