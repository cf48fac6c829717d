// Package keys holds the kinds of keys: KongKeySet (a key set in a control plane) and KongKey (a JWK or PEM key,
// in a key set or not).
package keys

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/kinds/kindbase"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

// indexKeySetRef finds the KongKeys of a KongKeySet.
const indexKeySetRef = "konnect.keySetRef"

// KeySet is the Kind of KongKeySet.
func KeySet() entity.Kind[*configurationv1alpha1.KongKeySet] {
	type obj = *configurationv1alpha1.KongKeySet
	return entity.Kind[obj]{Mapping: kindbase.Mapping[obj]{
		Kind:       "KongKeySet",
		EntityType: konnectapi.TypeKeySet,
		NewObject:  func() obj { return &configurationv1alpha1.KongKeySet{} },
		NewObjects: func() client.ObjectList { return &configurationv1alpha1.KongKeySetList{} },
		ItemsOf: func(l client.ObjectList) []obj {
			return kindbase.Pointers(l.(*configurationv1alpha1.KongKeySetList).Items)
		},
		IsManaged: func(o obj) bool { return o.Spec.ControlPlaneRef.ForKonnect() },
		Refs: func(ctx context.Context, c client.Reader, o obj) (entity.Refs, []entity.RefCheck, error) {
			return kindbase.ResolveControlPlane(ctx, c, "KongKeySet", o.Namespace, o.Spec.ControlPlaneRef)
		},
		Body: func(o obj, _ entity.Refs) (map[string]any, error) {
			return map[string]any{"name": o.Spec.Name, "tags": kindbase.StringsToAny(entity.IdentityTags("KongKeySet", o, o.Spec.Tags))}, nil
		},
		Conds:    func(o obj) *[]metav1.Condition { return &o.Status.Conditions },
		GetState: func(o obj) entity.State { return kindbase.StateInControlPlane(o.Status.Konnect, o.Status.SyncStatus) },
		PutState: func(o obj, st entity.State) {
			o.Status.Konnect, o.Status.SyncStatus = kindbase.StatusInControlPlane(st), st.Sync
		},
		RefIndexes: []entity.RefIndex{kindbase.CPRefIndex(func(o client.Object) *configurationv1alpha1.ControlPlaneRef {
			return o.(obj).Spec.ControlPlaneRef
		})},
	}}
}

// keySetParent is a key's reference to its KongKeySet.
var keySetParent = kindbase.Parent[*configurationv1alpha1.KongKeySet]{
	Kind: "KongKeySet", Condition: konnectv1alpha1.ConditionKeySetRefValid,
	New: func() *configurationv1alpha1.KongKeySet { return &configurationv1alpha1.KongKeySet{} },
	Konnect: func(o *configurationv1alpha1.KongKeySet) *configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef {
		return o.Status.Konnect
	},
}

// keySetName is the KongKeySet a key names, "" when it names none (or names a key set by Konnect ID).
func keySetName(k *configurationv1alpha1.KongKey) string {
	if r := k.Spec.KeySetRef; r != nil && r.Type == configurationv1alpha1.KeySetRefNamespacedRef && r.NamespacedRef != nil {
		return r.NamespacedRef.Name
	}
	return ""
}

// Key is the Kind of KongKey. Konnect deletes a key set's keys with it.
func Key() entity.Kind[*configurationv1alpha1.KongKey] {
	type obj = *configurationv1alpha1.KongKey
	return entity.Kind[obj]{Mapping: kindbase.Mapping[obj]{
		Kind:       "KongKey",
		EntityType: konnectapi.TypeKey,
		NewObject:  func() obj { return &configurationv1alpha1.KongKey{} },
		NewObjects: func() client.ObjectList { return &configurationv1alpha1.KongKeyList{} },
		ItemsOf: func(l client.ObjectList) []obj {
			return kindbase.Pointers(l.(*configurationv1alpha1.KongKeyList).Items)
		},
		IsManaged: func(o obj) bool { return o.Spec.ControlPlaneRef.ForKonnect() },
		Refs:      resolveKey,
		Body: func(o obj, refs entity.Refs) (map[string]any, error) {
			body, err := kindbase.BodyOf(o.Spec.KongKeyAPISpec)
			if err != nil {
				return nil, err
			}
			if refs.ParentID != "" {
				body["set"] = map[string]any{"id": refs.ParentID}
			}
			body["tags"] = kindbase.StringsToAny(entity.IdentityTags("KongKey", o, o.Spec.Tags))
			return body, nil
		},
		Conds: func(o obj) *[]metav1.Condition { return &o.Status.Conditions },
		GetState: func(o obj) entity.State {
			if k := o.Status.Konnect; k != nil {
				st := kindbase.StateInControlPlane(&k.KonnectEntityStatusWithControlPlaneRef, o.Status.SyncStatus)
				st.ParentID = k.KeySetID
				return st
			}
			return entity.State{Sync: o.Status.SyncStatus}
		},
		PutState: func(o obj, st entity.State) {
			o.Status.Konnect = &configurationv1alpha1.KonnectEntityStatusWithControlPlaneAndKeySetRef{
				KonnectEntityStatusWithControlPlaneRef: *kindbase.StatusInControlPlane(st), KeySetID: st.ParentID,
			}
			o.Status.SyncStatus = st.Sync
		},
		RefIndexes: []entity.RefIndex{
			kindbase.CPRefIndex(func(o client.Object) *configurationv1alpha1.ControlPlaneRef { return o.(obj).Spec.ControlPlaneRef }),
			keySetParent.Index(indexKeySetRef, func(o client.Object) string { return keySetName(o.(obj)) }),
		},
	}}
}

// resolveKey: the KongKeySet, when the key names one, must be Programmed and in the key's control plane; then the
// control plane and its auth configuration must be valid. A key set named by Konnect ID is checked by Konnect.
func resolveKey(ctx context.Context, c client.Reader, k *configurationv1alpha1.KongKey) (entity.Refs, []entity.RefCheck, error) {
	setCheck := entity.RefCheck{Type: konnectv1alpha1.ConditionKeySetRefValid, Absent: k.Spec.KeySetRef == nil}
	var setID string
	if name := keySetName(k); name != "" {
		set, id, check, err := keySetParent.Read(ctx, c, k.Namespace, name)
		if err != nil || !check.OK {
			return entity.Refs{}, []entity.RefCheck{check}, err
		}
		if own, setCP := kindbase.CPRefKey(k.Namespace, k.Spec.ControlPlaneRef), kindbase.CPRefKey(set.Namespace, set.Spec.ControlPlaneRef); own != setCP {
			check.OK, check.Message = false, fmt.Sprintf("KongKeySet %s/%s is in KonnectGatewayControlPlane %s, the key in %s: they must be the same", k.Namespace, name, kindbase.CPRefShown(k.Namespace, setCP), kindbase.CPRefShown(k.Namespace, own))
			return entity.Refs{}, []entity.RefCheck{check}, nil
		}
		setCheck, setID = check, id
	} else if r := k.Spec.KeySetRef; r != nil && r.KonnectID != nil {
		setCheck.OK, setCheck.Message, setID = true, "key set "+*r.KonnectID+" named by Konnect ID", *r.KonnectID
	}
	refs, checks, err := kindbase.ResolveControlPlane(ctx, c, "KongKey", k.Namespace, k.Spec.ControlPlaneRef)
	if err != nil {
		return entity.Refs{}, nil, err
	}
	refs.ParentID = setID
	return refs, append([]entity.RefCheck{setCheck}, checks...), nil
}
