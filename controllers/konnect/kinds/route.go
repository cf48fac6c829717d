package kinds

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/kinds/kindbase"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

// Route is the Kind of KongRoute: a route of a service, or a service-less route, in a Konnect control plane.
func Route() entity.Kind[*configurationv1alpha1.KongRoute] {
	return entity.Kind[*configurationv1alpha1.KongRoute]{Mapping: routeMapping{}}
}

// routeMapping adapts KongRoute.
type routeMapping struct{}

func (routeMapping) Name() string                          { return "KongRoute" }
func (routeMapping) Type() konnectapi.EntityType           { return konnectapi.TypeRoute }
func (routeMapping) New() *configurationv1alpha1.KongRoute { return &configurationv1alpha1.KongRoute{} }
func (routeMapping) NewList() client.ObjectList            { return &configurationv1alpha1.KongRouteList{} }
func (routeMapping) Items(l client.ObjectList) []*configurationv1alpha1.KongRoute {
	return kindbase.Pointers(l.(*configurationv1alpha1.KongRouteList).Items)
}

// serviceRefName is the KongService a route names; an unset type counts as namespacedRef, the only one there is.
func serviceRefName(r *configurationv1alpha1.KongRoute) string {
	ref := r.Spec.ServiceRef
	if ref == nil || (ref.Type != "" && ref.Type != configurationv1alpha1.ServiceRefNamespacedRef) || ref.NamespacedRef == nil {
		return ""
	}
	return ref.NamespacedRef.Name
}

// Managed: a route of a service, or a service-less route in a Konnect control plane.
func (routeMapping) Managed(r *configurationv1alpha1.KongRoute) bool {
	return r.Spec.ServiceRef != nil || r.Spec.ControlPlaneRef.ForKonnect()
}

// Resolve: a route of a service needs the service Programmed (which implies its control plane was); a
// service-less route needs its control plane. Either way the control plane's auth configuration must be valid.
func (routeMapping) Resolve(ctx context.Context, c client.Reader, r *configurationv1alpha1.KongRoute) (entity.Refs, []entity.RefCheck, error) {
	if r.Spec.ServiceRef == nil {
		return kindbase.ResolveControlPlane(ctx, c, "KongRoute", r.Namespace, r.Spec.ControlPlaneRef)
	}
	check := entity.RefCheck{Type: konnectv1alpha1.ConditionKongServiceRefValid}
	name := serviceRefName(r)
	if name == "" {
		check.Message = "serviceRef must be of type namespacedRef with a name"
		return entity.Refs{}, []entity.RefCheck{check}, nil
	}
	svc := &configurationv1alpha1.KongService{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: name}, svc); err != nil {
		if apierrors.IsNotFound(err) {
			check.Message = fmt.Sprintf("KongService %s/%s not found", r.Namespace, name)
			return entity.Refs{}, []entity.RefCheck{check}, nil
		}
		return entity.Refs{}, nil, err
	}
	if !svc.DeletionTimestamp.IsZero() || svc.Status.Konnect == nil || svc.Status.Konnect.ID == "" {
		check.Message = fmt.Sprintf("KongService %s/%s does not exist in Konnect yet (or is being deleted)", r.Namespace, name)
		return entity.Refs{}, []entity.RefCheck{check}, nil
	}
	check.OK, check.Message = true, fmt.Sprintf("KongService %s/%s exists in Konnect", r.Namespace, name)
	if own, svcCP := kindbase.CPRefKey(r.Namespace, r.Spec.ControlPlaneRef), kindbase.CPRefKey(svc.Namespace, svc.Spec.ControlPlaneRef); own != "" && own != svcCP {
		cpCheck := entity.RefCheck{Type: konnectv1alpha1.ConditionControlPlaneRefValid, Message: fmt.Sprintf(
			"controlPlaneRef names KonnectGatewayControlPlane %s but KongService %s/%s is in %s: a route lives in its service's control plane, so drop controlPlaneRef or make them match",
			kindbase.CPRefShown(r.Namespace, own), r.Namespace, name, kindbase.CPRefShown(r.Namespace, svcCP))}
		return entity.Refs{}, []entity.RefCheck{check, cpCheck}, nil
	}
	refs, checks, err := kindbase.ResolveControlPlane(ctx, c, "KongService", r.Namespace, svc.Spec.ControlPlaneRef)
	if err != nil {
		return entity.Refs{}, nil, err
	}
	refs.ServiceID = svc.Status.Konnect.ID
	return refs, append([]entity.RefCheck{check}, checks...), nil
}

func (k routeMapping) Desired(r *configurationv1alpha1.KongRoute, refs entity.Refs) (map[string]any, error) {
	body, err := kindbase.BodyOf(r.Spec.KongRouteAPISpec)
	if err != nil {
		return nil, err
	}
	body["tags"] = kindbase.StringsToAny(entity.IdentityTags(k.Name(), r, r.Spec.Tags))
	if refs.ServiceID != "" {
		body["service"] = map[string]any{"id": refs.ServiceID}
	}
	return body, nil
}

func (routeMapping) DriftKeys() []string { return nil }

func (routeMapping) Conditions(r *configurationv1alpha1.KongRoute) *[]metav1.Condition {
	return &r.Status.Conditions
}

func (routeMapping) State(r *configurationv1alpha1.KongRoute) entity.State {
	if k := r.Status.Konnect; k != nil {
		st := kindbase.StateInControlPlane(&k.KonnectEntityStatusWithControlPlaneRef, r.Status.SyncStatus)
		st.ServiceID = k.ServiceID
		return st
	}
	return entity.State{Sync: r.Status.SyncStatus}
}

func (routeMapping) SetState(r *configurationv1alpha1.KongRoute, st entity.State) {
	r.Status.Konnect = &configurationv1alpha1.KonnectEntityStatusWithControlPlaneAndServiceRefs{
		KonnectEntityStatusWithControlPlaneRef: *kindbase.StatusInControlPlane(st),
		ServiceID:                              st.ServiceID,
	}
	r.Status.SyncStatus = st.Sync
}

func (k routeMapping) DeletionScope(ctx context.Context, c client.Reader, r *configurationv1alpha1.KongRoute, st entity.State) (*konnectv1alpha1.KonnectAPIAuthConfiguration, string, error) {
	return kindbase.DeletionScopeInControlPlane(ctx, c, r, st, k.Resolve)
}

func (routeMapping) Indexes() []entity.RefIndex {
	return []entity.RefIndex{
		kindbase.CPRefIndex(func(o client.Object) *configurationv1alpha1.ControlPlaneRef {
			return o.(*configurationv1alpha1.KongRoute).Spec.ControlPlaneRef
		}),
		{
			Field:  indexServiceRef,
			Target: &configurationv1alpha1.KongService{},
			Extract: func(o client.Object) []string {
				if name := serviceRefName(o.(*configurationv1alpha1.KongRoute)); name != "" {
					return []string{name}
				}
				return nil
			},
		},
	}
}
