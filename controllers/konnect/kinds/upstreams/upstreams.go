// Package upstreams holds the kinds of Kong's load balancing: KongUpstream (an upstream in a control plane) and
// KongTarget (a server of an upstream, written through it).
package upstreams

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/grants"
	"github.com/almproject/alm/controllers/konnect/kinds/kindbase"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

// indexUpstreamRef finds the KongTargets of a KongUpstream.
const indexUpstreamRef = "konnect.upstreamRef"

// Upstream is the Kind of KongUpstream.
func Upstream() entity.Kind[*configurationv1alpha1.KongUpstream] {
	type obj = *configurationv1alpha1.KongUpstream
	return entity.Kind[obj]{Mapping: kindbase.Mapping[obj]{
		Kind:       "KongUpstream",
		EntityType: konnectapi.TypeUpstream,
		NewObject:  func() obj { return &configurationv1alpha1.KongUpstream{} },
		NewObjects: func() client.ObjectList { return &configurationv1alpha1.KongUpstreamList{} },
		ItemsOf: func(l client.ObjectList) []obj {
			return kindbase.Pointers(l.(*configurationv1alpha1.KongUpstreamList).Items)
		},
		IsManaged: func(u obj) bool { return u.Spec.ControlPlaneRef.ForKonnect() },
		Refs:      resolveUpstream,
		Body: func(u obj, refs entity.Refs) (map[string]any, error) {
			body, err := kindbase.BodyOf(u.Spec.KongUpstreamAPISpec)
			if err != nil {
				return nil, err
			}
			if ids, ok := refs.Found.(kindbase.CertIDs); ok {
				ids.AddToBody(body)
			}
			if u.Spec.Name == "" {
				body["name"] = u.Name
			}
			body["tags"] = kindbase.StringsToAny(entity.IdentityTags("KongUpstream", u, u.Spec.Tags))
			return body, nil
		},
		Conds:    func(u obj) *[]metav1.Condition { return &u.Status.Conditions },
		GetState: func(u obj) entity.State { return kindbase.StateInControlPlane(u.Status.Konnect, u.Status.SyncStatus) },
		PutState: func(u obj, st entity.State) {
			u.Status.Konnect, u.Status.SyncStatus = kindbase.StatusInControlPlane(st), st.Sync
		},
		RefIndexes: []entity.RefIndex{kindbase.CPRefIndex(func(o client.Object) *configurationv1alpha1.ControlPlaneRef {
			return o.(obj).Spec.ControlPlaneRef
		}), kindbase.CertRefIndex(kindbase.IndexClientCertificateRef, &configurationv1alpha1.KongCertificate{}, func(o client.Object) []configurationv1alpha1.NamespacedRef {
			if ref := o.(obj).Spec.ClientCertificateRef; ref != nil {
				return []configurationv1alpha1.NamespacedRef{*ref}
			}
			return nil
		})},
	}}
}

// resolveUpstream: the control plane and its auth configuration, then the clientCertificateRef.
func resolveUpstream(ctx context.Context, c client.Reader, u *configurationv1alpha1.KongUpstream) (entity.Refs, []entity.RefCheck, error) {
	refs, checks, err := kindbase.ResolveControlPlane(ctx, c, "KongUpstream", u.Namespace, u.Spec.ControlPlaneRef)
	if err != nil || refs.Auth == nil {
		return refs, checks, err
	}
	certs := kindbase.CertRefs{From: grants.From{Group: configurationv1alpha1.GroupVersion.Group, Kind: "KongUpstream", Namespace: u.Namespace},
		Client: u.Spec.ClientCertificateRef}
	ids, certChecks, err := certs.Resolve(ctx, c, refs.ControlPlaneID)
	if err != nil {
		return entity.Refs{}, nil, err
	}
	refs.Found = ids
	return refs, append(checks, certChecks...), nil
}

// upstreamParent is a target's reference to its KongUpstream.
var upstreamParent = kindbase.Parent[*configurationv1alpha1.KongUpstream]{
	Kind: "KongUpstream", Condition: konnectv1alpha1.ConditionKongUpstreamRefValid,
	New: func() *configurationv1alpha1.KongUpstream { return &configurationv1alpha1.KongUpstream{} },
	Konnect: func(u *configurationv1alpha1.KongUpstream) *configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef {
		return u.Status.Konnect
	},
}

// Target is the Kind of KongTarget: a target of its KongUpstream's entity, in the upstream's control plane.
func Target() entity.Kind[*configurationv1alpha1.KongTarget] {
	type obj = *configurationv1alpha1.KongTarget
	m := kindbase.Mapping[obj]{
		Kind:       "KongTarget",
		EntityType: konnectapi.TypeTarget,
		NewObject:  func() obj { return &configurationv1alpha1.KongTarget{} },
		NewObjects: func() client.ObjectList { return &configurationv1alpha1.KongTargetList{} },
		ItemsOf: func(l client.ObjectList) []obj {
			return kindbase.Pointers(l.(*configurationv1alpha1.KongTargetList).Items)
		},
		IsManaged: func(obj) bool { return true },
		Refs:      resolveTarget,
		Body: func(t obj, refs entity.Refs) (map[string]any, error) {
			return map[string]any{
				"target": t.Spec.Target, "weight": int64(t.Spec.Weight), "upstream": map[string]any{"id": refs.ParentID},
				"tags": kindbase.StringsToAny(entity.IdentityTags("KongTarget", t, t.Spec.Tags)),
			}, nil
		},
		Conds:    func(t obj) *[]metav1.Condition { return &t.Status.Conditions },
		GetState: targetState,
		PutState: func(t obj, st entity.State) {
			t.Status.Konnect = &configurationv1alpha1.KonnectEntityStatusWithControlPlaneAndUpstreamRefs{
				KonnectEntityStatusWithControlPlaneRef: *kindbase.StatusInControlPlane(st), UpstreamID: st.ParentID,
			}
			t.Status.SyncStatus = st.Sync
		},
		RefIndexes: []entity.RefIndex{upstreamParent.Index(indexUpstreamRef, func(o client.Object) string {
			return o.(obj).Spec.UpstreamRef.Name
		})},
	}
	// A target is deleted through its upstream (Konnect deletes the targets with it).
	m.Scope = func(ctx context.Context, c client.Reader, t obj, st entity.State) (*konnectv1alpha1.KonnectAPIAuthConfiguration, string, error) {
		auth, cpID, err := kindbase.DeletionScopeInControlPlane(ctx, c, t, st, resolveTarget)
		return auth, konnectapi.InParent(cpID, st.ParentID), err
	}
	return entity.Kind[obj]{Mapping: m}
}

func targetState(t *configurationv1alpha1.KongTarget) entity.State {
	if k := t.Status.Konnect; k != nil {
		st := kindbase.StateInControlPlane(&k.KonnectEntityStatusWithControlPlaneRef, t.Status.SyncStatus)
		st.ParentID = k.UpstreamID
		return st
	}
	return entity.State{Sync: t.Status.SyncStatus}
}

// resolveTarget: the KongUpstream must be Programmed (which implies its control plane was), then its control plane
// and auth configuration must be valid.
func resolveTarget(ctx context.Context, c client.Reader, t *configurationv1alpha1.KongTarget) (entity.Refs, []entity.RefCheck, error) {
	up, id, check, err := upstreamParent.Read(ctx, c, t.Namespace, t.Spec.UpstreamRef.Name)
	if err != nil || !check.OK {
		return entity.Refs{}, []entity.RefCheck{check}, err
	}
	refs, checks, err := kindbase.ResolveControlPlane(ctx, c, "KongUpstream", t.Namespace, up.Spec.ControlPlaneRef)
	if err != nil {
		return entity.Refs{}, nil, err
	}
	refs.ParentID = id
	return refs, append([]entity.RefCheck{check}, checks...), nil
}
