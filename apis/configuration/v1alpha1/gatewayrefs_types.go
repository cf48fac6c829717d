package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
)

// ObjectNameRef names an object of a known kind in the referrer's namespace (Kong's NameRef: a name only).
type ObjectNameRef struct {
	// name of the referenced object.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// SecretNamespacedRef names a Secret, in the referrer's namespace or (where a KongReferenceGrant there allows the
// referrer's kind to read Secrets) in another.
type SecretNamespacedRef struct {
	// name of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// namespace of the Secret; the referrer's own when empty. Another namespace is used only where a
	// KongReferenceGrant in it allows the referrer's kind from the referrer's namespace to Secrets (group core).
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace *string `json:"namespace,omitempty"`
}

// NamespacedRef names an object of a kind the field implies, in the referrer's namespace or (where a
// KongReferenceGrant there allows it) in another (Kong's operator's NamespacedRef).
type NamespacedRef struct {
	// name of the referenced object.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// namespace of the referenced object; the referrer's own when empty. Another namespace is used only where a
	// KongReferenceGrant in it allows the referrer's kind from the referrer's namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace *string `json:"namespace,omitempty"`
}

// ClusterControlPlaneRef references the control plane of a cluster-scoped object (a KongVault): its
// konnectNamespacedRef names the KonnectGatewayControlPlane's namespace too.
// +kubebuilder:validation:XValidation:rule="self.type != 'konnectID'",message="'konnectID' type is not supported: reference a KonnectGatewayControlPlane (source Mirror for an existing control plane) with konnectNamespacedRef"
// +kubebuilder:validation:XValidation:rule="self.type != 'konnectNamespacedRef' || has(self.konnectNamespacedRef)",message="when type is konnectNamespacedRef, konnectNamespacedRef must be set"
// +kubebuilder:validation:XValidation:rule="self.type != 'kic' || (!has(self.konnectID) && !has(self.konnectNamespacedRef))",message="when type is kic, konnectID and konnectNamespacedRef must not be set"
type ClusterControlPlaneRef struct {
	// type is the kind of reference: konnectNamespacedRef (a KonnectGatewayControlPlane), konnectID (refused) or kic
	// (the default: Kong Ingress Controller configuration, ignored by this operator).
	// +optional
	// +kubebuilder:default=kic
	Type ControlPlaneRefType `json:"type,omitempty"`
	// konnectID is the Konnect ID of a control plane, for type konnectID.
	// +optional
	KonnectID *KonnectIDType `json:"konnectID,omitempty"`
	// konnectNamespacedRef names a KonnectGatewayControlPlane and its namespace, for type konnectNamespacedRef.
	// +optional
	KonnectNamespacedRef *ClusterKonnectNamespacedRef `json:"konnectNamespacedRef,omitempty"`
}

// ForKonnect says whether the reference puts the object in Konnect's hands, i.e. this operator's.
func (r *ClusterControlPlaneRef) ForKonnect() bool {
	return r != nil && r.Type == ControlPlaneRefKonnectNamespacedRef
}

// ClusterKonnectNamespacedRef names a KonnectGatewayControlPlane from a cluster-scoped object.
type ClusterKonnectNamespacedRef struct {
	// name of the KonnectGatewayControlPlane.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// namespace of the KonnectGatewayControlPlane (required: the referrer has none).
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
}

// KonnectEntityStatusWithControlPlaneAndUpstreamRefs is the Konnect status of a target.
type KonnectEntityStatusWithControlPlaneAndUpstreamRefs struct {
	KonnectEntityStatusWithControlPlaneRef `json:",inline"`
	// upstreamID is the Konnect ID of the upstream the target belongs to.
	// +optional
	UpstreamID string `json:"upstreamID,omitempty"`
}

// KonnectEntityStatusWithControlPlaneAndCertificateRefs is the Konnect status of an SNI.
type KonnectEntityStatusWithControlPlaneAndCertificateRefs struct {
	KonnectEntityStatusWithControlPlaneRef `json:",inline"`
	// certificateID is the Konnect ID of the certificate the SNI belongs to.
	// +optional
	CertificateID string `json:"certificateID,omitempty"`
}

// KonnectEntityStatusWithControlPlaneAndKeySetRef is the Konnect status of a key.
type KonnectEntityStatusWithControlPlaneAndKeySetRef struct {
	KonnectEntityStatusWithControlPlaneRef `json:",inline"`
	// keySetID is the Konnect ID of the key set the key is in.
	// +optional
	KeySetID string `json:"keySetID,omitempty"`
}

// GatewayEntityStatus is the status of the kinds of upstreams, certificates, keys and vaults: their Konnect entity,
// the operator's bookkeeping and conditions.
type GatewayEntityStatus struct {
	konnectv1alpha1.SyncStatus `json:",inline"`
	// conditions: Programmed and the validity of each reference.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}
