// Package kindbase is what the Konnect operator's kinds are built on: resolving a control plane reference and its
// auth configuration, the status of an entity inside a control plane, its deletion scope, and the JSON body of an
// API spec. The kinds packages (kinds, and those of upstreams, TLS, keys and vaults) share it.
package kindbase

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	"github.com/almproject/alm/controllers/konnect/authconfig"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/grants"
)

// Index names shared by the kinds.
const (
	// IndexControlPlaneRef finds the objects that reference a KonnectGatewayControlPlane by name.
	IndexControlPlaneRef = "konnect.controlPlaneRef"
	// IndexControlPlaneID finds a KonnectGatewayControlPlane by its Konnect ID.
	IndexControlPlaneID = "konnect.controlPlaneID"
)

// ResolveAuth reads the auth configuration name in namespace and checks that it is valid (condition APIAuthRefValid).
func ResolveAuth(ctx context.Context, c client.Reader, namespace, name string) (*konnectv1alpha1.KonnectAPIAuthConfiguration, entity.RefCheck, error) {
	check := entity.RefCheck{Type: konnectv1alpha1.ConditionAPIAuthRefValid}
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
	if !authconfig.Valid(auth) {
		check.Message = fmt.Sprintf("KonnectAPIAuthConfiguration %s/%s is not valid yet (condition %s)", namespace, name, konnectv1alpha1.ConditionAPIAuthValid)
		return nil, check, nil
	}
	check.OK, check.Message = true, fmt.Sprintf("KonnectAPIAuthConfiguration %s/%s is valid", namespace, name)
	return auth, check, nil
}

// CPReady says whether children can be placed in the control plane: it exists in Konnect and is not going away.
// A failed update of the control plane does not make its children invalid: it still exists.
func CPReady(cp *konnectv1alpha2.KonnectGatewayControlPlane) bool {
	return cp.DeletionTimestamp.IsZero() && cp.Status.ID != ""
}

// CPRefName is the KonnectGatewayControlPlane a reference names, "" when it names none.
func CPRefName(ref *configurationv1alpha1.ControlPlaneRef) string {
	if !ref.ForKonnect() || ref.KonnectNamespacedRef == nil {
		return ""
	}
	return ref.KonnectNamespacedRef.Name
}

// CPRefKey is namespace/name of the KonnectGatewayControlPlane a reference of an object in namespace names, ""
// when it names none: two references name the same control plane when their keys are equal.
func CPRefKey(namespace string, ref *configurationv1alpha1.ControlPlaneRef) string {
	if name := CPRefName(ref); name != "" {
		return CPRefNamespace(namespace, ref) + "/" + name
	}
	return ""
}

// CPRefShown is a CPRefKey as a message names it to an object in namespace: the name alone for a control plane of
// that namespace, namespace/name for one of another.
func CPRefShown(namespace, key string) string {
	if name, ok := strings.CutPrefix(key, namespace+"/"); ok {
		return name
	}
	return key
}

// CPRefNamespace is the namespace of the KonnectGatewayControlPlane a reference of an object in namespace names.
func CPRefNamespace(namespace string, ref *configurationv1alpha1.ControlPlaneRef) string {
	if ref.ForKonnect() && ref.KonnectNamespacedRef != nil && ref.KonnectNamespacedRef.Namespace != "" {
		return ref.KonnectNamespacedRef.Namespace
	}
	return namespace
}

// ResolveControlPlane checks the control plane reference ref of an object of kind (group configuration.konghq.com)
// in namespace: the control plane (in another namespace only where a KongReferenceGrant there allows it), then its
// auth configuration.
func ResolveControlPlane(ctx context.Context, c client.Reader, kind, namespace string, ref *configurationv1alpha1.ControlPlaneRef) (entity.Refs, []entity.RefCheck, error) {
	name := CPRefName(ref)
	if name == "" {
		check := entity.RefCheck{Type: konnectv1alpha1.ConditionControlPlaneRefValid, Message: "controlPlaneRef must be of type konnectNamespacedRef with a name"}
		return entity.Refs{}, []entity.RefCheck{check}, nil
	}
	from := grants.From{Group: configurationv1alpha1.GroupVersion.Group, Kind: kind, Namespace: namespace}
	return ResolveControlPlaneIn(ctx, c, from, CPRefNamespace(namespace, ref), name)
}

// ResolveControlPlaneIn checks that from may reference the KonnectGatewayControlPlane namespace/name (a
// KongReferenceGrant when namespace is not from's), that it exists in Konnect, and its auth configuration.
func ResolveControlPlaneIn(ctx context.Context, c client.Reader, from grants.From, namespace, name string) (entity.Refs, []entity.RefCheck, error) {
	check := entity.RefCheck{Type: konnectv1alpha1.ConditionControlPlaneRefValid}
	to := grants.To{Group: konnectv1alpha2.GroupVersion.Group, Kind: "KonnectGatewayControlPlane", Namespace: namespace, Name: name}
	if denied := grants.Check(ctx, c, from, to); denied != "" {
		check.Reason, check.Message = konnectv1alpha1.ReasonRefNotPermitted, denied
		return entity.Refs{}, []entity.RefCheck{check}, nil
	}
	cp := &konnectv1alpha2.KonnectGatewayControlPlane{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, cp); err != nil {
		if apierrors.IsNotFound(err) {
			check.Message = fmt.Sprintf("KonnectGatewayControlPlane %s/%s not found", namespace, name)
			return entity.Refs{}, []entity.RefCheck{check}, nil
		}
		return entity.Refs{}, nil, err
	}
	if !CPReady(cp) {
		check.Message = fmt.Sprintf("KonnectGatewayControlPlane %s/%s does not exist in Konnect yet (or is being deleted)", namespace, name)
		return entity.Refs{}, []entity.RefCheck{check}, nil
	}
	check.OK, check.Message = true, fmt.Sprintf("KonnectGatewayControlPlane %s/%s exists in Konnect", namespace, name)
	auth, authCheck, err := ResolveAuth(ctx, c, namespace, cp.Spec.KonnectConfiguration.APIAuthConfigurationRef.Name)
	if err != nil {
		return entity.Refs{}, nil, err
	}
	return entity.Refs{Auth: auth, ControlPlaneID: cp.Status.ID}, []entity.RefCheck{check, authCheck}, nil
}

// BodyOf is the JSON form of an API spec, i.e. its Konnect body (the API types use Konnect's field names).
func BodyOf(v any) (map[string]any, error) {
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

// StringsToAny is s as a JSON array.
func StringsToAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// LabelsToAny is m as a JSON object.
func LabelsToAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Pointers returns a pointer to each item of a list's Items.
func Pointers[E any](items []E) []*E {
	out := make([]*E, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// DeletionScopeInControlPlane is the DeletionScope of an entity inside a control plane: the auth configuration of
// the KonnectGatewayControlPlane it was placed in, found by its Konnect ID in any namespace, grant or no grant (if
// that object is gone, Konnect deleted the entities with it). An object never placed in a control plane is resolved as a create would have been.
func DeletionScopeInControlPlane[T client.Object](ctx context.Context, c client.Reader, obj T, st entity.State,
	resolve func(context.Context, client.Reader, T) (entity.Refs, []entity.RefCheck, error),
) (*konnectv1alpha1.KonnectAPIAuthConfiguration, string, error) {
	if st.ControlPlaneID == "" {
		refs, _, err := resolve(ctx, c, obj)
		if err != nil || refs.Auth == nil {
			return nil, "", err
		}
		return refs.Auth, refs.ControlPlaneID, nil
	}
	// The control plane may be in another namespace (a grant allowed it; it may be gone since: deleting needs none).
	// One mirrored in several namespaces has one ID: the object's own namespace's comes first.
	cps := &konnectv1alpha2.KonnectGatewayControlPlaneList{}
	if err := c.List(ctx, cps, client.MatchingFields{IndexControlPlaneID: st.ControlPlaneID}); err != nil {
		return nil, "", err
	}
	if len(cps.Items) == 0 {
		return nil, "", nil
	}
	cp := &cps.Items[0]
	for i := range cps.Items {
		if cps.Items[i].Namespace == obj.GetNamespace() {
			cp = &cps.Items[i]
		}
	}
	auth, err := AuthOf(ctx, c, cp)
	return auth, st.ControlPlaneID, err
}

// AuthOf reads the auth configuration of a control plane; nil when it is gone.
func AuthOf(ctx context.Context, c client.Reader, cp *konnectv1alpha2.KonnectGatewayControlPlane) (*konnectv1alpha1.KonnectAPIAuthConfiguration, error) {
	auth := &konnectv1alpha1.KonnectAPIAuthConfiguration{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: cp.Namespace, Name: cp.Spec.KonnectConfiguration.APIAuthConfigurationRef.Name}, auth); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return auth, nil
}

// StateInControlPlane is the State of an entity inside a control plane.
func StateInControlPlane(k *configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef, sync konnectv1alpha1.SyncStatus) entity.State {
	st := entity.State{Sync: sync}
	if k != nil {
		st.ID, st.OrgID, st.ServerURL, st.ControlPlaneID = k.ID, k.OrgID, k.ServerURL, k.ControlPlaneID
	}
	return st
}

// StatusInControlPlane is the status of an entity inside a control plane.
func StatusInControlPlane(st entity.State) *configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef {
	return &configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef{
		KonnectEntityStatus: konnectv1alpha1.KonnectEntityStatus{ID: st.ID, OrgID: st.OrgID, ServerURL: st.ServerURL},
		ControlPlaneID:      st.ControlPlaneID,
	}
}

// CPRefIndex is the index of a kind's control plane reference (ref reads it from an object): objects are found by
// the namespace/name of the control plane they name, in any namespace (a reference may cross namespaces).
func CPRefIndex(ref func(client.Object) *configurationv1alpha1.ControlPlaneRef) entity.RefIndex {
	return entity.RefIndex{
		Field:  IndexControlPlaneRef,
		Target: &konnectv1alpha2.KonnectGatewayControlPlane{},
		Extract: func(o client.Object) []string {
			if key := CPRefKey(o.GetNamespace(), ref(o)); key != "" {
				return []string{key}
			}
			return nil
		},
		Key: func(cp client.Object) string { return cp.GetNamespace() + "/" + cp.GetName() },
	}
}
