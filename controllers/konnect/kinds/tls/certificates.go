// Package tls holds the kinds of TLS material: KongCertificate (a certificate and its key, inline or from a
// Secret), KongSNI (a server name of a certificate), KongCACertificate and KongDataPlaneClientCertificate.
package tls

import (
	"context"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/grants"
	"github.com/almproject/alm/controllers/konnect/kinds/kindbase"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

func fromSecret(t *configurationv1alpha1.CertificateSourceType) bool {
	return t != nil && *t == configurationv1alpha1.CertificateSourceSecretRef
}

// Certificate is the Kind of KongCertificate.
func Certificate() entity.Kind[*configurationv1alpha1.KongCertificate] {
	type obj = *configurationv1alpha1.KongCertificate
	m := kindbase.Mapping[obj]{
		Kind:       "KongCertificate",
		EntityType: konnectapi.TypeCertificate,
		NewObject:  func() obj { return &configurationv1alpha1.KongCertificate{} },
		NewObjects: func() client.ObjectList { return &configurationv1alpha1.KongCertificateList{} },
		ItemsOf: func(l client.ObjectList) []obj {
			return kindbase.Pointers(l.(*configurationv1alpha1.KongCertificateList).Items)
		},
		IsManaged: func(o obj) bool { return o.Spec.ControlPlaneRef.ForKonnect() },
		Refs:      resolveCertificate,
		Body: func(o obj, refs entity.Refs) (map[string]any, error) {
			return certificateBody(o.Spec.KongCertificateAPISpec, refs, entity.IdentityTags("KongCertificate", o, o.Spec.Tags))
		},
		Keys:     []string{"cert", "key", "cert_alt", "key_alt", "tags"},
		Conds:    func(o obj) *[]metav1.Condition { return &o.Status.Conditions },
		GetState: func(o obj) entity.State { return kindbase.StateInControlPlane(o.Status.Konnect, o.Status.SyncStatus) },
		PutState: func(o obj, st entity.State) {
			o.Status.Konnect, o.Status.SyncStatus = kindbase.StatusInControlPlane(st), st.Sync
		},
		RefIndexes: []entity.RefIndex{kindbase.CPRefIndex(func(o client.Object) *configurationv1alpha1.ControlPlaneRef {
			return o.(obj).Spec.ControlPlaneRef
		})},
	}
	follow := readingSecret(&configurationv1alpha1.KongCertificateList{}, func(l client.ObjectList) []client.Object {
		return objects(l.(*configurationv1alpha1.KongCertificateList).Items)
	}, func(o client.Object) []*configurationv1alpha1.SecretNamespacedRef {
		return []*configurationv1alpha1.SecretNamespacedRef{o.(obj).Spec.SecretRef, o.(obj).Spec.SecretRefAlt}
	})
	return entity.Kind[obj]{Mapping: m, Hashed: hashed, Follows: []entity.Follow{{Target: &corev1.Secret{}, Map: follow}}}
}

// resolveCertificate: the control plane and its auth configuration, then (type secretRef) the Secrets.
func resolveCertificate(ctx context.Context, c client.Reader, o *configurationv1alpha1.KongCertificate) (entity.Refs, []entity.RefCheck, error) {
	refs, checks, err := kindbase.ResolveControlPlane(ctx, c, "KongCertificate", o.Namespace, o.Spec.ControlPlaneRef)
	if err != nil || refs.Auth == nil || !fromSecret(o.Spec.Type) {
		return refs, checks, err
	}
	m := &material{fields: map[string]any{}}
	from := grants.From{Group: configurationv1alpha1.GroupVersion.Group, Kind: "KongCertificate", Namespace: o.Namespace}
	check, err := m.readSecret(ctx, c, from, o.Spec.SecretRef, []string{secretKeyCert, secretKeyKey}, []string{"cert", "key"})
	if err == nil && check.OK && o.Spec.SecretRefAlt != nil {
		check, err = m.readSecret(ctx, c, from, o.Spec.SecretRefAlt, []string{secretKeyCert, secretKeyKey}, []string{"cert_alt", "key_alt"})
	}
	if err != nil || !check.OK {
		return entity.Refs{}, append(checks, check), err
	}
	refs.Found = m
	return refs, append(checks, check), nil
}

// certificateBody is the body of a certificate: its PEM data inline, or read from Secrets (refs.Found).
func certificateBody(spec configurationv1alpha1.KongCertificateAPISpec, refs entity.Refs, tags []string) (map[string]any, error) {
	body, err := kindbase.BodyOf(spec)
	if err != nil {
		return nil, err
	}
	if m, ok := refs.Found.(*material); ok {
		maps.Copy(body, m.fields)
	}
	body["tags"] = kindbase.StringsToAny(tags)
	return body, nil
}

// CACertificate is the Kind of KongCACertificate.
func CACertificate() entity.Kind[*configurationv1alpha1.KongCACertificate] {
	type obj = *configurationv1alpha1.KongCACertificate
	m := kindbase.Mapping[obj]{
		Kind:       "KongCACertificate",
		EntityType: konnectapi.TypeCACertificate,
		NewObject:  func() obj { return &configurationv1alpha1.KongCACertificate{} },
		NewObjects: func() client.ObjectList { return &configurationv1alpha1.KongCACertificateList{} },
		ItemsOf: func(l client.ObjectList) []obj {
			return kindbase.Pointers(l.(*configurationv1alpha1.KongCACertificateList).Items)
		},
		IsManaged: func(o obj) bool { return o.Spec.ControlPlaneRef.ForKonnect() },
		Refs:      resolveCACertificate,
		Body: func(o obj, refs entity.Refs) (map[string]any, error) {
			body := map[string]any{"cert": o.Spec.Cert, "tags": kindbase.StringsToAny(entity.IdentityTags("KongCACertificate", o, o.Spec.Tags))}
			if m, ok := refs.Found.(*material); ok {
				maps.Copy(body, m.fields)
			}
			return body, nil
		},
		Keys:     []string{"cert", "tags"},
		Conds:    func(o obj) *[]metav1.Condition { return &o.Status.Conditions },
		GetState: func(o obj) entity.State { return kindbase.StateInControlPlane(o.Status.Konnect, o.Status.SyncStatus) },
		PutState: func(o obj, st entity.State) {
			o.Status.Konnect, o.Status.SyncStatus = kindbase.StatusInControlPlane(st), st.Sync
		},
		RefIndexes: []entity.RefIndex{kindbase.CPRefIndex(func(o client.Object) *configurationv1alpha1.ControlPlaneRef {
			return o.(obj).Spec.ControlPlaneRef
		})},
	}
	follow := readingSecret(&configurationv1alpha1.KongCACertificateList{}, func(l client.ObjectList) []client.Object {
		return objects(l.(*configurationv1alpha1.KongCACertificateList).Items)
	}, func(o client.Object) []*configurationv1alpha1.SecretNamespacedRef {
		return []*configurationv1alpha1.SecretNamespacedRef{o.(obj).Spec.SecretRef}
	})
	return entity.Kind[obj]{Mapping: m, Hashed: hashed, Follows: []entity.Follow{{Target: &corev1.Secret{}, Map: follow}}}
}

// resolveCACertificate: the control plane and its auth configuration, then (type secretRef) the Secret's ca.crt.
func resolveCACertificate(ctx context.Context, c client.Reader, o *configurationv1alpha1.KongCACertificate) (entity.Refs, []entity.RefCheck, error) {
	refs, checks, err := kindbase.ResolveControlPlane(ctx, c, "KongCACertificate", o.Namespace, o.Spec.ControlPlaneRef)
	if err != nil || refs.Auth == nil || !fromSecret(o.Spec.Type) {
		return refs, checks, err
	}
	m := &material{fields: map[string]any{}}
	from := grants.From{Group: configurationv1alpha1.GroupVersion.Group, Kind: "KongCACertificate", Namespace: o.Namespace}
	check, err := m.readSecret(ctx, c, from, o.Spec.SecretRef, []string{secretKeyCACert}, []string{"cert"})
	if err != nil || !check.OK {
		return entity.Refs{}, append(checks, check), err
	}
	refs.Found = m
	return refs, append(checks, check), nil
}

// objects returns a client.Object for each item of a list's Items.
func objects[E any, P interface {
	*E
	client.Object
}](items []E) []client.Object {
	out := make([]client.Object, len(items))
	for i := range items {
		out[i] = P(&items[i])
	}
	return out
}
