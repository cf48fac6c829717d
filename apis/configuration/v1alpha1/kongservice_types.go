package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
)

// KongServiceAPISpec is a Kong Gateway service as Konnect's API spells it.
type KongServiceAPISpec struct {
	// url is a shorthand for protocol, host, port and path at once.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	URL *string `json:"url,omitempty"`
	// connect_timeout in milliseconds.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ConnectTimeout *int64 `json:"connect_timeout,omitempty"`
	// enabled says whether the service is active.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// host of the upstream server.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Host string `json:"host"`
	// name of the service in Kong.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Name *string `json:"name,omitempty"`
	// path used in requests to the upstream server.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Path *string `json:"path,omitempty"`
	// port of the upstream server.
	// +optional
	// +kubebuilder:default=80
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	Port int64 `json:"port,omitempty"`
	// protocol used to talk to the upstream.
	// +optional
	// +kubebuilder:default=http
	// +kubebuilder:validation:Enum=grpc;grpcs;http;https;tcp;tls;tls_passthrough;udp;ws;wss
	Protocol string `json:"protocol,omitempty"`
	// read_timeout in milliseconds.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ReadTimeout *int64 `json:"read_timeout,omitempty"`
	// retries on proxy failure.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Retries *int64 `json:"retries,omitempty"`
	// tags of the service in Kong; the operator adds its own k8s-* tags.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:XValidation:rule="self.all(tag, size(tag) >= 1 && size(tag) <= 128)",message="tags entries must not be longer than 128 characters"
	Tags []string `json:"tags,omitempty"`
	// tls_verify enables verification of the upstream server's TLS certificate.
	// +optional
	TLSVerify *bool `json:"tls_verify,omitempty"`
	// tls_verify_depth is the maximum depth of the certificate chain checked.
	// +optional
	TLSVerifyDepth *int64 `json:"tls_verify_depth,omitempty"`
	// write_timeout in milliseconds.
	// +optional
	// +kubebuilder:validation:Minimum=1
	WriteTimeout *int64 `json:"write_timeout,omitempty"`
}

// KongServiceSpec declares a Kong service in a Konnect control plane.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.controlPlaneRef) || has(self.controlPlaneRef)",message="controlPlaneRef is required once set"
// +kubebuilder:validation:XValidation:rule="!has(self.controlPlaneRef) || self.controlPlaneRef.type != 'kic'",message="KIC is not supported as control plane"
type KongServiceSpec struct {
	// controlPlaneRef is the control plane the service lives in (type konnectNamespacedRef). It cannot change once
	// the service is Programmed: delete and recreate the object to move a service.
	// +required
	ControlPlaneRef *ControlPlaneRef `json:"controlPlaneRef,omitempty"`
	// adopt takes an entity that already exists in Konnect over instead of creating one (Kong's spec.adopt). It
	// cannot change.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.adopt is immutable"
	Adopt *AdoptOptions `json:"adopt,omitempty"`
	// clientCertificateRef names the KongCertificate presented as client certificate to the upstream over TLS
	// (Konnect's client_certificate). It must be in the service's control plane; in another namespace a
	// KongReferenceGrant there must allow KongService from this namespace to KongCertificate.
	// +optional
	ClientCertificateRef *NamespacedRef `json:"clientCertificateRef,omitempty"`
	// caCertificateRefs name the KongCACertificates that verify the upstream's TLS certificate (Konnect's
	// ca_certificates), under the same rules as clientCertificateRef (to KongCACertificate).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	CACertificateRefs []NamespacedRef `json:"caCertificateRefs,omitempty"`

	KongServiceAPISpec `json:",inline"`
}

// KongServiceStatus is the service's state in Konnect.
type KongServiceStatus struct {
	// konnect is the Konnect entity the service is synchronised with.
	// +optional
	Konnect                    *KonnectEntityStatusWithControlPlaneRef `json:"konnect,omitempty"`
	konnectv1alpha1.SyncStatus `json:",inline"`

	// conditions: Programmed, ControlPlaneRefValid, APIAuthRefValid, and with certificate references
	// KongCertificateRefValid and KongCACertificateRefsValid.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// KongService is a Kong Gateway service configured in Konnect.
// +kubebuilder:validation:XValidation:rule="!has(self.spec.controlPlaneRef) || !has(oldSelf.spec.controlPlaneRef) || !has(oldSelf.status) || !has(oldSelf.status.conditions) || !oldSelf.status.conditions.exists(c, c.type == 'Programmed' && c.status == 'True') || self.spec.controlPlaneRef == oldSelf.spec.controlPlaneRef",message="spec.controlPlaneRef is immutable when an entity is already Programmed"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ks
// +kubebuilder:printcolumn:name="Host",type=string,JSONPath=`.spec.host`
// +kubebuilder:printcolumn:name="Programmed",type=string,JSONPath=`.status.conditions[?(@.type=="Programmed")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.konnect.id`
// +kubebuilder:printcolumn:name="OrgID",type=string,JSONPath=`.status.konnect.organizationID`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KongService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KongServiceSpec   `json:"spec"`
	Status KongServiceStatus `json:"status,omitempty"`
}

// KongServiceList is a list of KongServices.
// +kubebuilder:object:root=true
type KongServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KongService `json:"items"`
}

// GetAdoptOptions returns spec.adopt (the entity reconciler adopts through it).
func (o *KongService) GetAdoptOptions() *AdoptOptions { return o.Spec.Adopt }
