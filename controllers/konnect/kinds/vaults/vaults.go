// Package vaults holds KongVault: a cluster-scoped vault whose control plane reference names the
// KonnectGatewayControlPlane's namespace.
package vaults

import (
	"context"
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/grants"
	"github.com/almproject/alm/controllers/konnect/kinds/kindbase"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

// Vault is the Kind of KongVault. A cluster-scoped object cannot be found through a namespaced field index, so a
// change of a control plane re-reconciles the vaults that name it by following it (Follows) instead.
func Vault() entity.Kind[*configurationv1alpha1.KongVault] {
	type obj = *configurationv1alpha1.KongVault
	return entity.Kind[obj]{Mapping: kindbase.Mapping[obj]{
		Kind:       "KongVault",
		EntityType: konnectapi.TypeVault,
		NewObject:  func() obj { return &configurationv1alpha1.KongVault{} },
		NewObjects: func() client.ObjectList { return &configurationv1alpha1.KongVaultList{} },
		ItemsOf: func(l client.ObjectList) []obj {
			return kindbase.Pointers(l.(*configurationv1alpha1.KongVaultList).Items)
		},
		IsManaged: func(o obj) bool { return o.Spec.ControlPlaneRef.ForKonnect() },
		Refs:      resolveVault,
		Body:      vaultBody,
		Conds:     func(o obj) *[]metav1.Condition { return &o.Status.Conditions },
		GetState:  func(o obj) entity.State { return kindbase.StateInControlPlane(o.Status.Konnect, o.Status.SyncStatus) },
		PutState: func(o obj, st entity.State) {
			o.Status.Konnect, o.Status.SyncStatus = kindbase.StatusInControlPlane(st), st.Sync
		},
	}, Follows: []entity.Follow{{Target: &konnectv1alpha2.KonnectGatewayControlPlane{}, Map: vaultsIn}}}
}

// controlPlaneOf is the namespace and name of the KonnectGatewayControlPlane a vault names ("" when none).
func controlPlaneOf(o *configurationv1alpha1.KongVault) (namespace, name string) {
	ref := o.Spec.ControlPlaneRef
	if !ref.ForKonnect() || ref.KonnectNamespacedRef == nil {
		return "", ""
	}
	return ref.KonnectNamespacedRef.Namespace, ref.KonnectNamespacedRef.Name
}

// resolveVault: the control plane, in the namespace the reference names (a KongVault has none of its own, so only
// where a KongReferenceGrant there allows KongVault from namespace ""), and its auth configuration.
func resolveVault(ctx context.Context, c client.Reader, o *configurationv1alpha1.KongVault) (entity.Refs, []entity.RefCheck, error) {
	namespace, name := controlPlaneOf(o)
	if namespace == "" {
		return entity.Refs{}, []entity.RefCheck{{Type: konnectv1alpha1.ConditionControlPlaneRefValid,
			Message: "controlPlaneRef.konnectNamespacedRef must name the KonnectGatewayControlPlane's namespace: a KongVault is cluster-scoped"}}, nil
	}
	return kindbase.ResolveControlPlaneIn(ctx, c, grants.From{Group: configurationv1alpha1.GroupVersion.Group, Kind: "KongVault"}, namespace, name)
}

// vaultBody is the vault: Konnect names it by its backend.
func vaultBody(o *configurationv1alpha1.KongVault, _ entity.Refs) (map[string]any, error) {
	config := map[string]any{}
	if len(o.Spec.Config.Raw) > 0 {
		if err := json.Unmarshal(o.Spec.Config.Raw, &config); err != nil {
			return nil, err
		}
	}
	body := map[string]any{"name": o.Spec.Backend, "prefix": o.Spec.Prefix, "config": config,
		"tags": kindbase.StringsToAny(entity.IdentityTags("KongVault", o, o.Spec.Tags))}
	if o.Spec.Description != "" {
		body["description"] = o.Spec.Description
	}
	return body, nil
}

// vaultsIn finds the vaults that name the control plane cp.
func vaultsIn(ctx context.Context, c client.Reader, cp client.Object) []types.NamespacedName {
	list := &configurationv1alpha1.KongVaultList{}
	if err := c.List(ctx, list); err != nil {
		return nil
	}
	var keys []types.NamespacedName
	for i := range list.Items {
		if ns, name := controlPlaneOf(&list.Items[i]); ns == cp.GetNamespace() && name == cp.GetName() {
			keys = append(keys, types.NamespacedName{Name: list.Items[i].Name})
		}
	}
	return keys
}
