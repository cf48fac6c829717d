package tls

import (
	"context"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/kinds/kindbase"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

// indexCertificateRef finds the KongSNIs of a KongCertificate.
const indexCertificateRef = "konnect.certificateRef"

// certificateParent is an SNI's reference to its KongCertificate.
var certificateParent = kindbase.Parent[*configurationv1alpha1.KongCertificate]{
	Kind: "KongCertificate", Condition: konnectv1alpha1.ConditionKongCertificateRefValid,
	New: func() *configurationv1alpha1.KongCertificate { return &configurationv1alpha1.KongCertificate{} },
	Konnect: func(o *configurationv1alpha1.KongCertificate) *configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef {
		return o.Status.Konnect
	},
}

// SNI is the Kind of KongSNI: a server name of its KongCertificate's entity, in the certificate's control plane.
// Konnect deletes a certificate's SNIs with it.
func SNI() entity.Kind[*configurationv1alpha1.KongSNI] {
	type obj = *configurationv1alpha1.KongSNI
	return entity.Kind[obj]{Mapping: kindbase.Mapping[obj]{
		Kind:       "KongSNI",
		EntityType: konnectapi.TypeSNI,
		NewObject:  func() obj { return &configurationv1alpha1.KongSNI{} },
		NewObjects: func() client.ObjectList { return &configurationv1alpha1.KongSNIList{} },
		ItemsOf: func(l client.ObjectList) []obj {
			return kindbase.Pointers(l.(*configurationv1alpha1.KongSNIList).Items)
		},
		IsManaged: func(obj) bool { return true },
		Refs:      resolveSNI,
		Body: func(o obj, refs entity.Refs) (map[string]any, error) {
			return map[string]any{"name": o.Spec.Name, "certificate": map[string]any{"id": refs.ParentID},
				"tags": kindbase.StringsToAny(entity.IdentityTags("KongSNI", o, o.Spec.Tags))}, nil
		},
		Conds: func(o obj) *[]metav1.Condition { return &o.Status.Conditions },
		GetState: func(o obj) entity.State {
			if k := o.Status.Konnect; k != nil {
				st := kindbase.StateInControlPlane(&k.KonnectEntityStatusWithControlPlaneRef, o.Status.SyncStatus)
				st.ParentID = k.CertificateID
				return st
			}
			return entity.State{Sync: o.Status.SyncStatus}
		},
		PutState: func(o obj, st entity.State) {
			o.Status.Konnect = &configurationv1alpha1.KonnectEntityStatusWithControlPlaneAndCertificateRefs{
				KonnectEntityStatusWithControlPlaneRef: *kindbase.StatusInControlPlane(st), CertificateID: st.ParentID,
			}
			o.Status.SyncStatus = st.Sync
		},
		RefIndexes: []entity.RefIndex{certificateParent.Index(indexCertificateRef, func(o client.Object) string {
			return o.(obj).Spec.CertificateRef.Name
		})},
	}}
}

// resolveSNI: the KongCertificate must be Programmed, then its control plane and auth configuration valid.
func resolveSNI(ctx context.Context, c client.Reader, o *configurationv1alpha1.KongSNI) (entity.Refs, []entity.RefCheck, error) {
	cert, id, check, err := certificateParent.Read(ctx, c, o.Namespace, o.Spec.CertificateRef.Name)
	if err != nil || !check.OK {
		return entity.Refs{}, []entity.RefCheck{check}, err
	}
	refs, checks, err := kindbase.ResolveControlPlane(ctx, c, "KongCertificate", o.Namespace, cert.Spec.ControlPlaneRef)
	if err != nil {
		return entity.Refs{}, nil, err
	}
	refs.ParentID = id
	return refs, append([]entity.RefCheck{check}, checks...), nil
}

// DataPlaneCertificate is the Kind of KongDataPlaneClientCertificate. Konnect keeps no tags on it, so only its
// certificate is compared for drift.
func DataPlaneCertificate() entity.Kind[*configurationv1alpha1.KongDataPlaneClientCertificate] {
	type obj = *configurationv1alpha1.KongDataPlaneClientCertificate
	return entity.Kind[obj]{Mapping: kindbase.Mapping[obj]{
		Kind:       "KongDataPlaneClientCertificate",
		EntityType: konnectapi.TypeDataPlaneCertificate,
		NewObject:  func() obj { return &configurationv1alpha1.KongDataPlaneClientCertificate{} },
		NewObjects: func() client.ObjectList { return &configurationv1alpha1.KongDataPlaneClientCertificateList{} },
		ItemsOf: func(l client.ObjectList) []obj {
			return kindbase.Pointers(l.(*configurationv1alpha1.KongDataPlaneClientCertificateList).Items)
		},
		IsManaged: func(o obj) bool { return o.Spec.ControlPlaneRef.ForKonnect() },
		Refs: func(ctx context.Context, c client.Reader, o obj) (entity.Refs, []entity.RefCheck, error) {
			return kindbase.ResolveControlPlane(ctx, c, "KongDataPlaneClientCertificate", o.Namespace, o.Spec.ControlPlaneRef)
		},
		Body:     func(o obj, _ entity.Refs) (map[string]any, error) { return map[string]any{"cert": o.Spec.Cert}, nil },
		Keys:     []string{"cert"},
		Conds:    func(o obj) *[]metav1.Condition { return &o.Status.Conditions },
		GetState: func(o obj) entity.State { return kindbase.StateInControlPlane(o.Status.Konnect, o.Status.SyncStatus) },
		PutState: func(o obj, st entity.State) {
			o.Status.Konnect, o.Status.SyncStatus = kindbase.StatusInControlPlane(st), st.Sync
		},
		RefIndexes: []entity.RefIndex{kindbase.CPRefIndex(func(o client.Object) *configurationv1alpha1.ControlPlaneRef {
			return o.(obj).Spec.ControlPlaneRef
		})},
	}, RecreateWhenGone: true, DedupeKey: certificatePEM}
}

// certificatePEM is the key of a data plane client certificate among its control plane's (Konnect keeps no tags on
// it): its certificate, without the whitespace around it.
func certificatePEM(body map[string]any) string {
	cert, _ := body["cert"].(string)
	return strings.TrimSpace(cert)
}
