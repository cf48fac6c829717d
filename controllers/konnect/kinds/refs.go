package kinds

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	"github.com/almproject/alm/controllers/konnect/authconfig"
	"github.com/almproject/alm/controllers/konnect/entity"
)

// Index names of the references (the field indexes the watches use to find referrers).
const (
	indexControlPlaneRef = "konnect.controlPlaneRef"
	indexServiceRef      = "konnect.serviceRef"
	// IndexControlPlaneID finds a KonnectGatewayControlPlane by its Konnect ID.
	IndexControlPlaneID = "konnect.controlPlaneID"
	indexMembers        = "konnect.members"
	indexCredentials    = "konnect.credentials"
	indexPluginRef      = "konnect.pluginRef"
)

func resolveAuth(ctx context.Context, c client.Reader, namespace, name string) (*konnectv1alpha1.KonnectAPIAuthConfiguration, entity.RefCheck, error) {
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
func resolveControlPlane(ctx context.Context, c client.Reader, namespace string, ref *configurationv1alpha1.ControlPlaneRef) (entity.Refs, []entity.RefCheck, error) {
	check := entity.RefCheck{Type: konnectv1alpha1.ConditionControlPlaneRefValid}
	name := cpRefName(ref)
	if name == "" {
		check.Message = "controlPlaneRef must be of type konnectNamespacedRef with a name"
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
	if !cpReady(cp) {
		check.Message = fmt.Sprintf("KonnectGatewayControlPlane %s/%s does not exist in Konnect yet (or is being deleted)", namespace, name)
		return entity.Refs{}, []entity.RefCheck{check}, nil
	}
	check.OK, check.Message = true, fmt.Sprintf("KonnectGatewayControlPlane %s/%s exists in Konnect", namespace, name)
	auth, authCheck, err := resolveAuth(ctx, c, namespace, cp.Spec.KonnectConfiguration.APIAuthConfigurationRef.Name)
	if err != nil {
		return entity.Refs{}, nil, err
	}
	return entity.Refs{Auth: auth, ControlPlaneID: cp.Status.ID}, []entity.RefCheck{check, authCheck}, nil
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

// pointers returns a pointer to each item of a list's Items.
func pointers[E any](items []E) []*E {
	out := make([]*E, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// deletionScopeInControlPlane is the DeletionScope of an entity inside a control plane: the auth configuration of
// the KonnectGatewayControlPlane it was placed in, found by its Konnect ID (if that object is gone, Konnect deleted
// the entities with it). An object never placed in a control plane is resolved as a create would have been.
func deletionScopeInControlPlane[T client.Object](ctx context.Context, c client.Reader, obj T, st entity.State,
	resolve func(context.Context, client.Reader, T) (entity.Refs, []entity.RefCheck, error),
) (*konnectv1alpha1.KonnectAPIAuthConfiguration, string, error) {
	if st.ControlPlaneID == "" {
		refs, _, err := resolve(ctx, c, obj)
		if err != nil || refs.Auth == nil {
			return nil, "", err
		}
		return refs.Auth, refs.ControlPlaneID, nil
	}
	cps := &konnectv1alpha2.KonnectGatewayControlPlaneList{}
	if err := c.List(ctx, cps, client.InNamespace(obj.GetNamespace()), client.MatchingFields{IndexControlPlaneID: st.ControlPlaneID}); err != nil {
		return nil, "", err
	}
	if len(cps.Items) == 0 {
		return nil, "", nil
	}
	auth, err := authOf(ctx, c, &cps.Items[0])
	return auth, st.ControlPlaneID, err
}

// authOf reads the auth configuration of a control plane; nil when it is gone.
func authOf(ctx context.Context, c client.Reader, cp *konnectv1alpha2.KonnectGatewayControlPlane) (*konnectv1alpha1.KonnectAPIAuthConfiguration, error) {
	auth := &konnectv1alpha1.KonnectAPIAuthConfiguration{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: cp.Namespace, Name: cp.Spec.KonnectConfiguration.APIAuthConfigurationRef.Name}, auth); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return auth, nil
}

// stateInControlPlane is the State of an entity inside a control plane.
func stateInControlPlane(k *configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef, sync konnectv1alpha1.SyncStatus) entity.State {
	st := entity.State{Sync: sync}
	if k != nil {
		st.ID, st.OrgID, st.ServerURL, st.ControlPlaneID = k.ID, k.OrgID, k.ServerURL, k.ControlPlaneID
	}
	return st
}

// statusInControlPlane is the status of an entity inside a control plane.
func statusInControlPlane(st entity.State) *configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef {
	return &configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef{
		KonnectEntityStatus: konnectv1alpha1.KonnectEntityStatus{ID: st.ID, OrgID: st.OrgID, ServerURL: st.ServerURL},
		ControlPlaneID:      st.ControlPlaneID,
	}
}
