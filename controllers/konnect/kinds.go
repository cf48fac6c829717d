package konnect

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
)

// Kind adapts one Kubernetes kind to the generic reconciler: which references it has, what it looks like in
// Konnect, and where its status lives. Everything else (the loop, the client, drift detection) is shared.
type Kind[T client.Object] interface {
	// Name is the Kubernetes kind, e.g. "KongService".
	Name() string
	// Type is the Konnect entity type.
	Type() EntityType
	New() T
	NewList() client.ObjectList
	Items(list client.ObjectList) []T
	// Managed says whether the object is this operator's (e.g. not configuration for Kong Ingress Controller).
	Managed(obj T) bool
	// Resolve follows the object's references in order and reports each one as a condition. It stops at the first
	// invalid one; refs is complete only when every check is OK. An error is a failed read (transient).
	Resolve(ctx context.Context, c client.Reader, obj T) (Refs, []RefCheck, error)
	// Desired is the Konnect body the object declares, including the identity tags (labels for control planes).
	Desired(obj T, refs Refs) (map[string]any, error)
	// DriftKeys are the body keys compared for drift; nil compares every key of Desired.
	DriftKeys() []string
	// Conditions is the object's status.conditions.
	Conditions(obj T) *[]metav1.Condition
	State(obj T) State
	SetState(obj T, s State)
	// Indexes are the field indexes of the references, for the watches that re-reconcile referrers.
	Indexes() []RefIndex
}

// Refs are the resolved references of an object.
type Refs struct {
	Auth      *konnectv1alpha1.KonnectAPIAuthConfiguration
	CPID      string
	ServiceID string
}

// RefCheck is the outcome of checking one reference, as a condition.
type RefCheck struct {
	Type    string
	OK      bool
	Message string
	// Reason overrides the condition's reason (default Valid or InvalidReference).
	Reason string
	// Advisory: a failure sets the condition but blocks nothing.
	Advisory bool
	// Absent: the object has nothing to check here; the condition is removed.
	Absent bool
}

// State is the Konnect part of an object's status, whichever shape its kind gives it.
type State struct {
	ID, OrgID, ServerURL, CPID, ServiceID string
	Sync                                  konnectv1alpha1.SyncStatus
}

// RefIndex is a field index of one reference: objects of the kind are found by the referenced object's name.
type RefIndex struct {
	// Field is the index name.
	Field string
	// Target is the kind of the referenced object.
	Target client.Object
	// Extract returns the names the object references through this field.
	Extract func(client.Object) []string
}

// Index names.
const (
	indexAuthRef         = "konnect.authRef"
	indexControlPlaneRef = "konnect.controlPlaneRef"
	indexServiceRef      = "konnect.serviceRef"
	indexSecretRef       = "konnect.secretRef"
	indexControlPlaneID  = "konnect.controlPlaneID"
	indexMembers         = "konnect.members"
	indexCredentials     = "konnect.credentials"
)

// ---- reference resolution, shared by the kinds ----

func authValid(a *konnectv1alpha1.KonnectAPIAuthConfiguration) bool {
	return apimeta.IsStatusConditionTrue(a.Status.Conditions, konnectv1alpha1.ConditionAPIAuthValid) && a.Status.OrganizationID != ""
}

func resolveAuth(ctx context.Context, c client.Reader, namespace, name string) (*konnectv1alpha1.KonnectAPIAuthConfiguration, RefCheck, error) {
	check := RefCheck{Type: konnectv1alpha1.ConditionAPIAuthRefValid}
	if name == "" {
		check.Message = "spec.konnect.authRef.name is empty: name a KonnectAPIAuthConfiguration"
		return nil, check, nil
	}
	auth := &konnectv1alpha1.KonnectAPIAuthConfiguration{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, auth); err != nil {
		if apierrors.IsNotFound(err) {
			check.Message = fmt.Sprintf("KonnectAPIAuthConfiguration %s/%s not found", namespace, name)
			return nil, check, nil
		}
		return nil, check, err
	}
	if !authValid(auth) {
		check.Message = fmt.Sprintf("KonnectAPIAuthConfiguration %s/%s is not valid yet (condition %s)", namespace, name, konnectv1alpha1.ConditionAPIAuthValid)
		return nil, check, nil
	}
	check.OK, check.Message = true, fmt.Sprintf("KonnectAPIAuthConfiguration %s/%s is valid", namespace, name)
	return auth, check, nil
}

// cpReady says whether children can be placed in the control plane: it exists in Konnect and is not going away.
// A failed update of the control plane does not make its children invalid: it still exists.
func cpReady(cp *konnectv1alpha2.KonnectGatewayControlPlane) bool {
	return cp.DeletionTimestamp.IsZero() && cp.Status.ID != ""
}

func cpRefName(ref *configurationv1alpha1.ControlPlaneRef) string {
	if !ref.ForKonnect() || ref.KonnectNamespacedRef == nil {
		return ""
	}
	return ref.KonnectNamespacedRef.Name
}

// resolveControlPlane checks a control plane reference, then the control plane's auth configuration.
func resolveControlPlane(ctx context.Context, c client.Reader, namespace string, ref *configurationv1alpha1.ControlPlaneRef) (Refs, []RefCheck, error) {
	check := RefCheck{Type: konnectv1alpha1.ConditionControlPlaneRefValid}
	name := cpRefName(ref)
	if name == "" {
		check.Message = "controlPlaneRef must be of type konnectNamespacedRef with a name"
		return Refs{}, []RefCheck{check}, nil
	}
	cp := &konnectv1alpha2.KonnectGatewayControlPlane{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, cp); err != nil {
		if apierrors.IsNotFound(err) {
			check.Message = fmt.Sprintf("KonnectGatewayControlPlane %s/%s not found", namespace, name)
			return Refs{}, []RefCheck{check}, nil
		}
		return Refs{}, nil, err
	}
	if !cpReady(cp) {
		check.Message = fmt.Sprintf("KonnectGatewayControlPlane %s/%s does not exist in Konnect yet (or is being deleted)", namespace, name)
		return Refs{}, []RefCheck{check}, nil
	}
	check.OK, check.Message = true, fmt.Sprintf("KonnectGatewayControlPlane %s/%s exists in Konnect", namespace, name)
	auth, authCheck, err := resolveAuth(ctx, c, namespace, cp.Spec.KonnectConfiguration.APIAuthConfigurationRef.Name)
	if err != nil {
		return Refs{}, nil, err
	}
	return Refs{Auth: auth, CPID: cp.Status.ID}, []RefCheck{check, authCheck}, nil
}

// bodyOf is the JSON form of an API spec, i.e. its Konnect body (the API types use Konnect's field names).
func bodyOf(v any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	body := map[string]any{}
	if err := json.Unmarshal(data, &body); err != nil {
		return nil, err
	}
	return body, nil
}

func stringsToAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func labelsToAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// ---- KonnectGatewayControlPlane ----

// ControlPlaneKind adapts KonnectGatewayControlPlane.
type ControlPlaneKind struct{}

func (ControlPlaneKind) Name() string     { return "KonnectGatewayControlPlane" }
func (ControlPlaneKind) Type() EntityType { return TypeControlPlane }
func (ControlPlaneKind) New() *konnectv1alpha2.KonnectGatewayControlPlane {
	return &konnectv1alpha2.KonnectGatewayControlPlane{}
}
func (ControlPlaneKind) NewList() client.ObjectList {
	return &konnectv1alpha2.KonnectGatewayControlPlaneList{}
}
func (ControlPlaneKind) Items(l client.ObjectList) []*konnectv1alpha2.KonnectGatewayControlPlane {
	list := l.(*konnectv1alpha2.KonnectGatewayControlPlaneList)
	out := make([]*konnectv1alpha2.KonnectGatewayControlPlane, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out
}

func (ControlPlaneKind) Managed(*konnectv1alpha2.KonnectGatewayControlPlane) bool { return true }

func (ControlPlaneKind) Resolve(ctx context.Context, c client.Reader, cp *konnectv1alpha2.KonnectGatewayControlPlane) (Refs, []RefCheck, error) {
	auth, check, err := resolveAuth(ctx, c, cp.Namespace, cp.Spec.KonnectConfiguration.APIAuthConfigurationRef.Name)
	if err != nil {
		return Refs{}, nil, err
	}
	return Refs{Auth: auth}, []RefCheck{check}, nil
}

// Desired is the control plane to create; a mirror declares nothing (it is only looked up).
func (k ControlPlaneKind) Desired(cp *konnectv1alpha2.KonnectGatewayControlPlane, _ Refs) (map[string]any, error) {
	req := cp.Spec.CreateControlPlaneRequest
	if req == nil {
		return map[string]any{}, nil
	}
	body, err := bodyOf(req)
	if err != nil {
		return nil, err
	}
	body["labels"] = labelsToAny(IdentityLabels(k.Name(), cp, req.Labels))
	return body, nil
}

// DriftKeys: a control plane's other fields are immutable or live under "config" in Konnect's answer.
func (ControlPlaneKind) DriftKeys() []string { return []string{"name", "description", "labels"} }

func (ControlPlaneKind) Conditions(cp *konnectv1alpha2.KonnectGatewayControlPlane) *[]metav1.Condition {
	return &cp.Status.Conditions
}

func (ControlPlaneKind) State(cp *konnectv1alpha2.KonnectGatewayControlPlane) State {
	return State{ID: cp.Status.ID, OrgID: cp.Status.OrgID, ServerURL: cp.Status.ServerURL, Sync: cp.Status.SyncStatus}
}

func (ControlPlaneKind) SetState(cp *konnectv1alpha2.KonnectGatewayControlPlane, s State) {
	cp.Status.KonnectEntityStatus = konnectv1alpha1.KonnectEntityStatus{ID: s.ID, OrgID: s.OrgID, ServerURL: s.ServerURL}
	cp.Status.SyncStatus = s.Sync
}

func (ControlPlaneKind) Indexes() []RefIndex {
	return []RefIndex{membersIndex(), {
		Field:  indexAuthRef,
		Target: &konnectv1alpha1.KonnectAPIAuthConfiguration{},
		Extract: func(o client.Object) []string {
			return []string{o.(*konnectv1alpha2.KonnectGatewayControlPlane).Spec.KonnectConfiguration.APIAuthConfigurationRef.Name}
		},
	}}
}

// ---- KongService ----

// ServiceKind adapts KongService.
type ServiceKind struct{}

func (ServiceKind) Name() string     { return "KongService" }
func (ServiceKind) Type() EntityType { return TypeService }
func (ServiceKind) New() *configurationv1alpha1.KongService {
	return &configurationv1alpha1.KongService{}
}
func (ServiceKind) NewList() client.ObjectList { return &configurationv1alpha1.KongServiceList{} }
func (ServiceKind) Items(l client.ObjectList) []*configurationv1alpha1.KongService {
	list := l.(*configurationv1alpha1.KongServiceList)
	out := make([]*configurationv1alpha1.KongService, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out
}

func (ServiceKind) Managed(s *configurationv1alpha1.KongService) bool {
	return s.Spec.ControlPlaneRef.ForKonnect()
}

func (ServiceKind) Resolve(ctx context.Context, c client.Reader, s *configurationv1alpha1.KongService) (Refs, []RefCheck, error) {
	return resolveControlPlane(ctx, c, s.Namespace, s.Spec.ControlPlaneRef)
}

// Desired is the service; its url, a write-only shorthand that Konnect stores as protocol, host, port and path, is
// sent as those four fields, so they can be compared for drift.
func (k ServiceKind) Desired(s *configurationv1alpha1.KongService, _ Refs) (map[string]any, error) {
	body, err := bodyOf(s.Spec.KongServiceAPISpec)
	if err != nil {
		return nil, err
	}
	if s.Spec.URL != nil {
		if err := expandURL(body, *s.Spec.URL); err != nil {
			return nil, fmt.Errorf("KongService %s/%s: spec.url: %w", s.Namespace, s.Name, err)
		}
	}
	body["tags"] = stringsToAny(IdentityTags(k.Name(), s, s.Spec.Tags))
	return body, nil
}

// expandURL replaces body's url with the protocol, host, port and path it stands for, as Kong does.
func expandURL(body map[string]any, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if u.Scheme == "" || u.Hostname() == "" {
		return fmt.Errorf("%q is not an absolute URL such as https://example.com:8443/api", raw)
	}
	port := map[string]int64{"http": 80, "ws": 80, "grpc": 80, "https": 443, "wss": 443, "grpcs": 443}[u.Scheme]
	if p := u.Port(); p != "" {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 || n > 65535 {
			return fmt.Errorf("%q has an invalid port", raw)
		}
		port = n
	}
	delete(body, "url")
	body["protocol"], body["host"], body["port"] = u.Scheme, u.Hostname(), port
	if u.Path != "" {
		body["path"] = u.Path
	}
	return nil
}

// DriftKeys: every field but url, which Desired expands.
func (ServiceKind) DriftKeys() []string {
	return []string{"connect_timeout", "enabled", "host", "name", "path", "port", "protocol", "read_timeout",
		"retries", "tags", "tls_verify", "tls_verify_depth", "write_timeout"}
}

func (ServiceKind) Conditions(s *configurationv1alpha1.KongService) *[]metav1.Condition {
	return &s.Status.Conditions
}

func (ServiceKind) State(s *configurationv1alpha1.KongService) State {
	st := State{Sync: s.Status.SyncStatus}
	if k := s.Status.Konnect; k != nil {
		st.ID, st.OrgID, st.ServerURL, st.CPID = k.ID, k.OrgID, k.ServerURL, k.ControlPlaneID
	}
	return st
}

func (ServiceKind) SetState(s *configurationv1alpha1.KongService, st State) {
	s.Status.Konnect = &configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef{
		KonnectEntityStatus: konnectv1alpha1.KonnectEntityStatus{ID: st.ID, OrgID: st.OrgID, ServerURL: st.ServerURL},
		ControlPlaneID:      st.CPID,
	}
	s.Status.SyncStatus = st.Sync
}

func (ServiceKind) Indexes() []RefIndex {
	return []RefIndex{cpRefIndex(func(o client.Object) *configurationv1alpha1.ControlPlaneRef {
		return o.(*configurationv1alpha1.KongService).Spec.ControlPlaneRef
	})}
}

func cpRefIndex(ref func(client.Object) *configurationv1alpha1.ControlPlaneRef) RefIndex {
	return RefIndex{
		Field:  indexControlPlaneRef,
		Target: &konnectv1alpha2.KonnectGatewayControlPlane{},
		Extract: func(o client.Object) []string {
			if name := cpRefName(ref(o)); name != "" {
				return []string{name}
			}
			return nil
		},
	}
}

// ---- KongRoute ----

// RouteKind adapts KongRoute.
type RouteKind struct{}

func (RouteKind) Name() string                          { return "KongRoute" }
func (RouteKind) Type() EntityType                      { return TypeRoute }
func (RouteKind) New() *configurationv1alpha1.KongRoute { return &configurationv1alpha1.KongRoute{} }
func (RouteKind) NewList() client.ObjectList            { return &configurationv1alpha1.KongRouteList{} }
func (RouteKind) Items(l client.ObjectList) []*configurationv1alpha1.KongRoute {
	list := l.(*configurationv1alpha1.KongRouteList)
	out := make([]*configurationv1alpha1.KongRoute, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out
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
func (RouteKind) Managed(r *configurationv1alpha1.KongRoute) bool {
	return r.Spec.ServiceRef != nil || r.Spec.ControlPlaneRef.ForKonnect()
}

// Resolve: a route of a service needs the service Programmed (which implies its control plane was); a
// service-less route needs its control plane. Either way the control plane's auth configuration must be valid.
func (RouteKind) Resolve(ctx context.Context, c client.Reader, r *configurationv1alpha1.KongRoute) (Refs, []RefCheck, error) {
	if r.Spec.ServiceRef == nil {
		return resolveControlPlane(ctx, c, r.Namespace, r.Spec.ControlPlaneRef)
	}
	check := RefCheck{Type: konnectv1alpha1.ConditionKongServiceRefValid}
	name := serviceRefName(r)
	if name == "" {
		check.Message = "serviceRef must be of type namespacedRef with a name"
		return Refs{}, []RefCheck{check}, nil
	}
	svc := &configurationv1alpha1.KongService{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: name}, svc); err != nil {
		if apierrors.IsNotFound(err) {
			check.Message = fmt.Sprintf("KongService %s/%s not found", r.Namespace, name)
			return Refs{}, []RefCheck{check}, nil
		}
		return Refs{}, nil, err
	}
	if !svc.DeletionTimestamp.IsZero() || svc.Status.Konnect == nil || svc.Status.Konnect.ID == "" {
		check.Message = fmt.Sprintf("KongService %s/%s does not exist in Konnect yet (or is being deleted)", r.Namespace, name)
		return Refs{}, []RefCheck{check}, nil
	}
	check.OK, check.Message = true, fmt.Sprintf("KongService %s/%s exists in Konnect", r.Namespace, name)
	if own, svcCP := cpRefName(r.Spec.ControlPlaneRef), cpRefName(svc.Spec.ControlPlaneRef); own != "" && own != svcCP {
		cpCheck := RefCheck{Type: konnectv1alpha1.ConditionControlPlaneRefValid, Message: fmt.Sprintf(
			"controlPlaneRef names KonnectGatewayControlPlane %s but KongService %s/%s is in %s: a route lives in its service's control plane, so drop controlPlaneRef or make them match",
			own, r.Namespace, name, svcCP)}
		return Refs{}, []RefCheck{check, cpCheck}, nil
	}
	refs, checks, err := resolveControlPlane(ctx, c, r.Namespace, svc.Spec.ControlPlaneRef)
	if err != nil {
		return Refs{}, nil, err
	}
	refs.ServiceID = svc.Status.Konnect.ID
	return refs, append([]RefCheck{check}, checks...), nil
}

func (k RouteKind) Desired(r *configurationv1alpha1.KongRoute, refs Refs) (map[string]any, error) {
	body, err := bodyOf(r.Spec.KongRouteAPISpec)
	if err != nil {
		return nil, err
	}
	body["tags"] = stringsToAny(IdentityTags(k.Name(), r, r.Spec.Tags))
	if refs.ServiceID != "" {
		body["service"] = map[string]any{"id": refs.ServiceID}
	}
	return body, nil
}

func (RouteKind) DriftKeys() []string { return nil }

func (RouteKind) Conditions(r *configurationv1alpha1.KongRoute) *[]metav1.Condition {
	return &r.Status.Conditions
}

func (RouteKind) State(r *configurationv1alpha1.KongRoute) State {
	st := State{Sync: r.Status.SyncStatus}
	if k := r.Status.Konnect; k != nil {
		st.ID, st.OrgID, st.ServerURL, st.CPID, st.ServiceID = k.ID, k.OrgID, k.ServerURL, k.ControlPlaneID, k.ServiceID
	}
	return st
}

func (RouteKind) SetState(r *configurationv1alpha1.KongRoute, st State) {
	r.Status.Konnect = &configurationv1alpha1.KonnectEntityStatusWithControlPlaneAndServiceRefs{
		KonnectEntityStatusWithControlPlaneRef: configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef{
			KonnectEntityStatus: konnectv1alpha1.KonnectEntityStatus{ID: st.ID, OrgID: st.OrgID, ServerURL: st.ServerURL},
			ControlPlaneID:      st.CPID,
		},
		ServiceID: st.ServiceID,
	}
	r.Status.SyncStatus = st.Sync
}

func (RouteKind) Indexes() []RefIndex {
	return []RefIndex{
		cpRefIndex(func(o client.Object) *configurationv1alpha1.ControlPlaneRef {
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

// ---- KongConsumer ----

// ConsumerKind adapts KongConsumer.
type ConsumerKind struct{}

func (ConsumerKind) Name() string                       { return "KongConsumer" }
func (ConsumerKind) Type() EntityType                   { return TypeConsumer }
func (ConsumerKind) New() *configurationv1.KongConsumer { return &configurationv1.KongConsumer{} }
func (ConsumerKind) NewList() client.ObjectList         { return &configurationv1.KongConsumerList{} }
func (ConsumerKind) Items(l client.ObjectList) []*configurationv1.KongConsumer {
	list := l.(*configurationv1.KongConsumerList)
	out := make([]*configurationv1.KongConsumer, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out
}

func (ConsumerKind) Managed(kc *configurationv1.KongConsumer) bool {
	return kc.Spec.ControlPlaneRef.ForKonnect()
}

func (ConsumerKind) Resolve(ctx context.Context, c client.Reader, kc *configurationv1.KongConsumer) (Refs, []RefCheck, error) {
	return resolveControlPlane(ctx, c, kc.Namespace, kc.Spec.ControlPlaneRef)
}

func (k ConsumerKind) Desired(kc *configurationv1.KongConsumer, _ Refs) (map[string]any, error) {
	body := map[string]any{"tags": stringsToAny(IdentityTags(k.Name(), kc, kc.Spec.Tags))}
	if kc.Username != "" {
		body["username"] = kc.Username
	}
	if kc.CustomID != "" {
		body["custom_id"] = kc.CustomID
	}
	return body, nil
}

func (ConsumerKind) DriftKeys() []string { return []string{"username", "custom_id", "tags"} }

func (ConsumerKind) Conditions(kc *configurationv1.KongConsumer) *[]metav1.Condition {
	return &kc.Status.Conditions
}

func (ConsumerKind) State(kc *configurationv1.KongConsumer) State {
	st := State{Sync: kc.Status.SyncStatus}
	if k := kc.Status.Konnect; k != nil {
		st.ID, st.OrgID, st.ServerURL, st.CPID = k.ID, k.OrgID, k.ServerURL, k.ControlPlaneID
	}
	return st
}

func (ConsumerKind) SetState(kc *configurationv1.KongConsumer, st State) {
	kc.Status.Konnect = &configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef{
		KonnectEntityStatus: konnectv1alpha1.KonnectEntityStatus{ID: st.ID, OrgID: st.OrgID, ServerURL: st.ServerURL},
		ControlPlaneID:      st.CPID,
	}
	kc.Status.SyncStatus = st.Sync
}

func (ConsumerKind) Indexes() []RefIndex {
	return []RefIndex{credentialsIndex(), cpRefIndex(func(o client.Object) *configurationv1alpha1.ControlPlaneRef {
		return o.(*configurationv1.KongConsumer).Spec.ControlPlaneRef
	})}
}
