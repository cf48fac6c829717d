package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KongUpstreamAPISpec is a Kong upstream (a load balancer of targets) as Konnect's API spells it.
type KongUpstreamAPISpec struct {
	// algorithm is the load-balancing algorithm.
	// +optional
	// +kubebuilder:validation:Enum=round-robin;consistent-hashing;least-connections;latency;sticky-sessions
	Algorithm *string `json:"algorithm,omitempty"`
	// client_certificate is the certificate (by Konnect ID) presented to the upstream servers. Deprecated in Kong's
	// operator: use clientCertificateRef.
	// +optional
	ClientCertificate *EntityIDRef `json:"client_certificate,omitempty"`
	// hash_fallback is the hashing input when hash_on gives none.
	// +optional
	// +kubebuilder:validation:Enum=none;consumer;ip;header;cookie;path;query_arg;uri_capture
	HashFallback *string `json:"hash_fallback,omitempty"`
	// hash_fallback_header is the header hashed for hash_fallback header.
	// +optional
	HashFallbackHeader *string `json:"hash_fallback_header,omitempty"`
	// hash_fallback_query_arg is the query argument hashed for hash_fallback query_arg.
	// +optional
	HashFallbackQueryArg *string `json:"hash_fallback_query_arg,omitempty"`
	// hash_fallback_uri_capture is the URI capture hashed for hash_fallback uri_capture.
	// +optional
	HashFallbackURICapture *string `json:"hash_fallback_uri_capture,omitempty"`
	// hash_on is the hashing input; none is weighted round-robin.
	// +optional
	// +kubebuilder:validation:Enum=none;consumer;ip;header;cookie;path;query_arg;uri_capture
	HashOn *string `json:"hash_on,omitempty"`
	// hash_on_cookie is the cookie hashed for hash_on or hash_fallback cookie.
	// +optional
	HashOnCookie *string `json:"hash_on_cookie,omitempty"`
	// hash_on_cookie_path is the path of that cookie.
	// +optional
	HashOnCookiePath *string `json:"hash_on_cookie_path,omitempty"`
	// hash_on_header is the header hashed for hash_on header.
	// +optional
	HashOnHeader *string `json:"hash_on_header,omitempty"`
	// hash_on_query_arg is the query argument hashed for hash_on query_arg.
	// +optional
	HashOnQueryArg *string `json:"hash_on_query_arg,omitempty"`
	// hash_on_uri_capture is the URI capture hashed for hash_on uri_capture.
	// +optional
	HashOnURICapture *string `json:"hash_on_uri_capture,omitempty"`
	// healthchecks configure active and passive health checks, as Kong's upstream healthchecks object.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Healthchecks *apiextensionsv1.JSON `json:"healthchecks,omitempty"`
	// host_header is the Host header sent to the upstream servers.
	// +optional
	HostHeader *string `json:"host_header,omitempty"`
	// name of the upstream: a hostname, matching the host of the services that use it.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name,omitempty"`
	// slots is the number of load-balancer slots (10-65536).
	// +optional
	// +kubebuilder:validation:Minimum=10
	// +kubebuilder:validation:Maximum=65536
	Slots *int64 `json:"slots,omitempty"`
	// tags of the upstream in Kong; the operator adds its own k8s-* tags.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:XValidation:rule="self.all(tag, size(tag) >= 1 && size(tag) <= 128)",message="tags entries must not be longer than 128 characters"
	Tags []string `json:"tags,omitempty"`
	// use_srv_name uses the SRV record's name as the Host header.
	// +optional
	UseSrvName *bool `json:"use_srv_name,omitempty"`
}

// EntityIDRef names a Konnect entity by its ID.
type EntityIDRef struct {
	// id of the Konnect entity.
	// +required
	ID string `json:"id"`
}

// KongUpstreamSpec declares an upstream in a Konnect control plane.
// +kubebuilder:validation:XValidation:rule="!has(self.controlPlaneRef) ? true : self.controlPlaneRef.type != 'kic'",message="KIC is not supported as control plane"
// +kubebuilder:validation:XValidation:rule="!(has(self.client_certificate) && has(self.clientCertificateRef))",message="client_certificate and clientCertificateRef are mutually exclusive"
type KongUpstreamSpec struct {
	// controlPlaneRef is the control plane the upstream lives in (type konnectNamespacedRef).
	// +required
	ControlPlaneRef *ControlPlaneRef `json:"controlPlaneRef"`
	// +optional
	KongUpstreamAPISpec `json:",inline"`
	// adopt takes an entity that already exists in Konnect over instead of creating one (Kong's spec.adopt). It
	// cannot change.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.adopt is immutable"
	Adopt *AdoptOptions `json:"adopt,omitempty"`
	// clientCertificateRef names the KongCertificate presented to the upstream servers (Konnect's
	// client_certificate). It must be in the upstream's control plane; in another namespace a KongReferenceGrant
	// there must allow KongUpstream from this namespace to KongCertificate.
	// +optional
	ClientCertificateRef *NamespacedRef `json:"clientCertificateRef,omitempty"`
}

// KongUpstreamStatus is the upstream's state in Konnect.
type KongUpstreamStatus struct {
	// konnect is the Konnect entity the upstream is synchronised with.
	// +optional
	Konnect             *KonnectEntityStatusWithControlPlaneRef `json:"konnect,omitempty"`
	GatewayEntityStatus `json:",inline"`
}

// KongUpstream is a Kong upstream configured in Konnect; KongTargets are its servers.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.spec.controlPlaneRef) || has(self.spec.controlPlaneRef)",message="controlPlaneRef is required once set"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.conditions) || !oldSelf.status.conditions.exists(c, c.type == 'Programmed' && c.status == 'True') || self.spec.controlPlaneRef == oldSelf.spec.controlPlaneRef",message="spec.controlPlaneRef is immutable when an entity is already Programmed"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=kong
// +kubebuilder:printcolumn:name="Programmed",type=string,JSONPath=`.status.conditions[?(@.type=="Programmed")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.konnect.id`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KongUpstream struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KongUpstreamSpec   `json:"spec"`
	Status KongUpstreamStatus `json:"status,omitempty"`
}

// KongUpstreamList is a list of KongUpstreams.
// +kubebuilder:object:root=true
type KongUpstreamList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KongUpstream `json:"items"`
}

// KongTargetAPISpec is a target (a server) of an upstream.
type KongTargetAPISpec struct {
	// target is the server's address: host or IP, with an optional port.
	// +required
	// +kubebuilder:validation:MinLength=1
	Target string `json:"target"`
	// weight of the target in the load balancer (0-65535).
	// +optional
	// +kubebuilder:default=100
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	Weight int `json:"weight"`
	// tags of the target in Kong; the operator adds its own k8s-* tags.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	Tags []string `json:"tags,omitempty"`
}

// KongTargetSpec declares a target of a KongUpstream.
type KongTargetSpec struct {
	// upstreamRef is the KongUpstream the target belongs to (in this namespace).
	// +required
	UpstreamRef       ObjectNameRef `json:"upstreamRef"`
	KongTargetAPISpec `json:",inline"`
	// adopt takes an entity that already exists in Konnect over instead of creating one (Kong's spec.adopt). It
	// cannot change.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.adopt is immutable"
	Adopt *AdoptOptions `json:"adopt,omitempty"`
}

// KongTargetStatus is the target's state in Konnect.
type KongTargetStatus struct {
	// konnect is the Konnect entity the target is synchronised with.
	// +optional
	Konnect             *KonnectEntityStatusWithControlPlaneAndUpstreamRefs `json:"konnect,omitempty"`
	GatewayEntityStatus `json:",inline"`
}

// KongTarget is a server of a KongUpstream configured in Konnect.
// +kubebuilder:validation:XValidation:rule="oldSelf.spec.upstreamRef == self.spec.upstreamRef",message="spec.upstreamRef is immutable"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=kong
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.spec.target`
// +kubebuilder:printcolumn:name="Programmed",type=string,JSONPath=`.status.conditions[?(@.type=="Programmed")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.konnect.id`
type KongTarget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KongTargetSpec   `json:"spec"`
	Status KongTargetStatus `json:"status,omitempty"`
}

// KongTargetList is a list of KongTargets.
// +kubebuilder:object:root=true
type KongTargetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KongTarget `json:"items"`
}
