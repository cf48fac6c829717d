package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CertificateSourceType says where a certificate's PEM data comes from.
// +kubebuilder:validation:Enum=inline;secretRef
type CertificateSourceType string

// Certificate sources, as in Kong's operator.
const (
	// CertificateSourceInline: the PEM data is in the spec.
	CertificateSourceInline CertificateSourceType = "inline"
	// CertificateSourceSecretRef: the PEM data is read from a Secret in the object's namespace (tls.crt and
	// tls.key for a KongCertificate, ca.crt for a KongCACertificate).
	CertificateSourceSecretRef CertificateSourceType = "secretRef"
)

// KongCertificateAPISpec is a certificate with its private key, as Konnect's API spells it.
type KongCertificateAPISpec struct {
	// cert is the PEM-encoded certificate (type inline).
	// +optional
	Cert string `json:"cert,omitempty"`
	// cert_alt is an alternative PEM-encoded certificate (e.g. ECDSA beside RSA), type inline.
	// +optional
	CertAlt string `json:"cert_alt,omitempty"`
	// key is the PEM-encoded private key of cert (type inline).
	// +optional
	Key string `json:"key,omitempty"`
	// key_alt is the PEM-encoded private key of cert_alt (type inline).
	// +optional
	KeyAlt string `json:"key_alt,omitempty"`
	// tags of the certificate in Kong; the operator adds its own k8s-* tags.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	Tags []string `json:"tags,omitempty"`
}

// KongCertificateSpec declares a certificate in a Konnect control plane.
// +kubebuilder:validation:XValidation:rule="!has(self.controlPlaneRef) ? true : self.controlPlaneRef.type != 'kic'",message="KIC is not supported as control plane"
// +kubebuilder:validation:XValidation:rule="self.type != 'inline' || (has(self.cert) && self.cert.size() != 0)",message="spec.cert is required when type is 'inline'"
// +kubebuilder:validation:XValidation:rule="self.type != 'inline' || (has(self.key) && self.key.size() != 0)",message="spec.key is required when type is 'inline'"
// +kubebuilder:validation:XValidation:rule="self.type != 'secretRef' || has(self.secretRef)",message="spec.secretRef is required when type is 'secretRef'"
// +kubebuilder:validation:XValidation:rule="!((has(self.cert) || has(self.key)) && (has(self.secretRef) || has(self.secretRefAlt)))",message="cert/key and secretRef/secretRefAlt cannot be set at the same time"
type KongCertificateSpec struct {
	KongCertificateAPISpec `json:",inline"`
	// type says where the PEM data comes from: inline (the default) or secretRef.
	// +optional
	// +kubebuilder:default=inline
	Type *CertificateSourceType `json:"type,omitempty"`
	// controlPlaneRef is the control plane the certificate lives in (type konnectNamespacedRef).
	// +required
	ControlPlaneRef *ControlPlaneRef `json:"controlPlaneRef"`
	// secretRef names a Secret with tls.crt and tls.key (type secretRef).
	// +optional
	SecretRef *SecretNamespacedRef `json:"secretRef,omitempty"`
	// secretRefAlt names a Secret with the alternative tls.crt and tls.key (type secretRef).
	// +optional
	SecretRefAlt *SecretNamespacedRef `json:"secretRefAlt,omitempty"`
	// adopt takes an entity that already exists in Konnect over instead of creating one (Kong's spec.adopt). It
	// cannot change.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.adopt is immutable"
	Adopt *AdoptOptions `json:"adopt,omitempty"`
}

// KongCertificateStatus is the certificate's state in Konnect.
type KongCertificateStatus struct {
	// konnect is the Konnect entity the certificate is synchronised with.
	// +optional
	Konnect             *KonnectEntityStatusWithControlPlaneRef `json:"konnect,omitempty"`
	GatewayEntityStatus `json:",inline"`
}

// KongCertificate is a TLS certificate and key configured in Konnect; KongSNIs name the hosts it serves.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.spec.controlPlaneRef) || has(self.spec.controlPlaneRef)",message="controlPlaneRef is required once set"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.conditions) || !oldSelf.status.conditions.exists(c, c.type == 'Programmed' && c.status == 'True') || self.spec.controlPlaneRef == oldSelf.spec.controlPlaneRef",message="spec.controlPlaneRef is immutable when an entity is already Programmed"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=kong
// +kubebuilder:printcolumn:name="Programmed",type=string,JSONPath=`.status.conditions[?(@.type=="Programmed")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.konnect.id`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KongCertificate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KongCertificateSpec   `json:"spec"`
	Status KongCertificateStatus `json:"status,omitempty"`
}

// KongCertificateList is a list of KongCertificates.
// +kubebuilder:object:root=true
type KongCertificateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KongCertificate `json:"items"`
}

// KongCACertificateAPISpec is a CA certificate, as Konnect's API spells it.
type KongCACertificateAPISpec struct {
	// cert is the PEM-encoded CA certificate (type inline).
	// +optional
	Cert string `json:"cert,omitempty"`
	// tags of the CA certificate in Kong; the operator adds its own k8s-* tags.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	Tags []string `json:"tags,omitempty"`
}

// KongCACertificateSpec declares a CA certificate in a Konnect control plane.
// +kubebuilder:validation:XValidation:rule="!has(self.controlPlaneRef) ? true : self.controlPlaneRef.type != 'kic'",message="KIC is not supported as control plane"
// +kubebuilder:validation:XValidation:rule="self.type != 'inline' || (has(self.cert) && self.cert.size() != 0)",message="spec.cert is required when type is 'inline'"
// +kubebuilder:validation:XValidation:rule="self.type != 'secretRef' || has(self.secretRef)",message="spec.secretRef is required when type is 'secretRef'"
// +kubebuilder:validation:XValidation:rule="!(has(self.cert) && has(self.secretRef))",message="cert and secretRef cannot be set at the same time"
type KongCACertificateSpec struct {
	KongCACertificateAPISpec `json:",inline"`
	// type says where the PEM data comes from: inline (the default) or secretRef.
	// +optional
	// +kubebuilder:default=inline
	Type *CertificateSourceType `json:"type,omitempty"`
	// controlPlaneRef is the control plane the CA certificate lives in (type konnectNamespacedRef).
	// +required
	ControlPlaneRef *ControlPlaneRef `json:"controlPlaneRef"`
	// secretRef names a Secret with ca.crt (type secretRef).
	// +optional
	SecretRef *SecretNamespacedRef `json:"secretRef,omitempty"`
	// adopt takes an entity that already exists in Konnect over instead of creating one (Kong's spec.adopt). It
	// cannot change.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.adopt is immutable"
	Adopt *AdoptOptions `json:"adopt,omitempty"`
}

// KongCACertificateStatus is the CA certificate's state in Konnect.
type KongCACertificateStatus struct {
	// konnect is the Konnect entity the CA certificate is synchronised with.
	// +optional
	Konnect             *KonnectEntityStatusWithControlPlaneRef `json:"konnect,omitempty"`
	GatewayEntityStatus `json:",inline"`
}

// KongCACertificate is a trusted CA certificate configured in Konnect.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.spec.controlPlaneRef) || has(self.spec.controlPlaneRef)",message="controlPlaneRef is required once set"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.conditions) || !oldSelf.status.conditions.exists(c, c.type == 'Programmed' && c.status == 'True') || self.spec.controlPlaneRef == oldSelf.spec.controlPlaneRef",message="spec.controlPlaneRef is immutable when an entity is already Programmed"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=kong
// +kubebuilder:printcolumn:name="Programmed",type=string,JSONPath=`.status.conditions[?(@.type=="Programmed")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.konnect.id`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KongCACertificate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KongCACertificateSpec   `json:"spec"`
	Status KongCACertificateStatus `json:"status,omitempty"`
}

// KongCACertificateList is a list of KongCACertificates.
// +kubebuilder:object:root=true
type KongCACertificateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KongCACertificate `json:"items"`
}

// KongSNIAPISpec is a server name of a certificate.
type KongSNIAPISpec struct {
	// name is the server name: a host or a wildcard host, unique in the control plane.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// tags of the SNI in Kong; the operator adds its own k8s-* tags.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	Tags []string `json:"tags,omitempty"`
}

// KongSNISpec declares a server name served with a KongCertificate.
type KongSNISpec struct {
	// certificateRef is the KongCertificate served for the name (in this namespace).
	// +required
	CertificateRef ObjectNameRef `json:"certificateRef"`
	KongSNIAPISpec `json:",inline"`
	// adopt takes an entity that already exists in Konnect over instead of creating one (Kong's spec.adopt). It
	// cannot change.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.adopt is immutable"
	Adopt *AdoptOptions `json:"adopt,omitempty"`
}

// KongSNIStatus is the SNI's state in Konnect.
type KongSNIStatus struct {
	// konnect is the Konnect entity the SNI is synchronised with.
	// +optional
	Konnect             *KonnectEntityStatusWithControlPlaneAndCertificateRefs `json:"konnect,omitempty"`
	GatewayEntityStatus `json:",inline"`
}

// KongSNI is a server name of a KongCertificate configured in Konnect.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.conditions) || !oldSelf.status.conditions.exists(c, c.type == 'Programmed' && c.status == 'True') || self.spec.certificateRef == oldSelf.spec.certificateRef",message="spec.certificateRef is immutable when programmed"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=kong
// +kubebuilder:printcolumn:name="Name",type=string,JSONPath=`.spec.name`
// +kubebuilder:printcolumn:name="Programmed",type=string,JSONPath=`.status.conditions[?(@.type=="Programmed")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.konnect.id`
type KongSNI struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KongSNISpec   `json:"spec"`
	Status KongSNIStatus `json:"status,omitempty"`
}

// KongSNIList is a list of KongSNIs.
// +kubebuilder:object:root=true
type KongSNIList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KongSNI `json:"items"`
}

// KongDataPlaneClientCertificateAPISpec is a certificate data planes present to their control plane.
type KongDataPlaneClientCertificateAPISpec struct {
	// cert is the PEM-encoded certificate; immutable once Programmed.
	// +required
	// +kubebuilder:validation:MinLength=1
	Cert string `json:"cert"`
}

// KongDataPlaneClientCertificateSpec declares a data plane client certificate of a Konnect control plane.
// +kubebuilder:validation:XValidation:rule="!has(self.controlPlaneRef) ? true : self.controlPlaneRef.type != 'kic'",message="KIC is not supported as control plane"
type KongDataPlaneClientCertificateSpec struct {
	// controlPlaneRef is the control plane that trusts the certificate (type konnectNamespacedRef).
	// +required
	ControlPlaneRef                       *ControlPlaneRef `json:"controlPlaneRef"`
	KongDataPlaneClientCertificateAPISpec `json:",inline"`
	// adopt takes an entity that already exists in Konnect over instead of creating one (Kong's spec.adopt). It
	// cannot change.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.adopt is immutable"
	Adopt *AdoptOptions `json:"adopt,omitempty"`
}

// KongDataPlaneClientCertificateStatus is the certificate's state in Konnect.
type KongDataPlaneClientCertificateStatus struct {
	// konnect is the Konnect entity the certificate is synchronised with.
	// +optional
	Konnect             *KonnectEntityStatusWithControlPlaneRef `json:"konnect,omitempty"`
	GatewayEntityStatus `json:",inline"`
}

// KongDataPlaneClientCertificate is a certificate data planes use to connect to a Konnect control plane.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.spec.controlPlaneRef) || has(self.spec.controlPlaneRef)",message="controlPlaneRef is required once set"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.conditions) || !oldSelf.status.conditions.exists(c, c.type == 'Programmed' && c.status == 'True') || self.spec.controlPlaneRef == oldSelf.spec.controlPlaneRef",message="spec.controlPlaneRef is immutable when an entity is already Programmed"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.conditions) || !oldSelf.status.conditions.exists(c, c.type == 'Programmed' && c.status == 'True') || self.spec.cert == oldSelf.spec.cert",message="spec.cert is immutable when an entity is already Programmed"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=kong
// +kubebuilder:printcolumn:name="Programmed",type=string,JSONPath=`.status.conditions[?(@.type=="Programmed")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.konnect.id`
type KongDataPlaneClientCertificate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KongDataPlaneClientCertificateSpec   `json:"spec"`
	Status KongDataPlaneClientCertificateStatus `json:"status,omitempty"`
}

// KongDataPlaneClientCertificateList is a list of KongDataPlaneClientCertificates.
// +kubebuilder:object:root=true
type KongDataPlaneClientCertificateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KongDataPlaneClientCertificate `json:"items"`
}
