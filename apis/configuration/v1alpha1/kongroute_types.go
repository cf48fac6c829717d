package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
)

// ServiceRefType says how a service is referenced.
// +kubebuilder:validation:Enum=namespacedRef
type ServiceRefType string

// ServiceRefNamespacedRef references a KongService in the route's namespace.
const ServiceRefNamespacedRef ServiceRefType = "namespacedRef"

// ServiceRef references the KongService a route belongs to.
// +kubebuilder:validation:XValidation:rule="!has(self.type) || self.type != 'namespacedRef' || has(self.namespacedRef)",message="when type is namespacedRef, namespacedRef must be set"
type ServiceRef struct {
	// type is the kind of reference; only namespacedRef is supported.
	// +optional
	Type ServiceRefType `json:"type,omitempty"`
	// namespacedRef names a KongService in the route's namespace.
	// +optional
	NamespacedRef *NameRef `json:"namespacedRef,omitempty"`
}

// NameRef names an object in the referrer's namespace.
// +kubebuilder:validation:XValidation:rule="!has(self.__namespace__) || size(self.__namespace__) == 0",message="cross-namespace references are not supported: the KongService must be in the route's namespace; leave namespace empty"
type NameRef struct {
	// name of the object.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// namespace is accepted only empty: a route's service is in the route's namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
}

// HeaderValues are the values a route accepts for one header.
// +kubebuilder:validation:MaxItems=64
// +kubebuilder:validation:items:MaxLength=1024
type HeaderValues []string

// Endpoint is an IP and/or port a route matches for stream protocols.
type Endpoint struct {
	// ip address or CIDR range.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	IP *string `json:"ip,omitempty"`
	// port number.
	// +optional
	Port *int64 `json:"port,omitempty"`
}

// KongRouteAPISpec is a Kong Gateway route as Konnect's API spells it.
type KongRouteAPISpec struct {
	// destinations matched by stream routes.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Destinations []Endpoint `json:"destinations,omitempty"`
	// headers matched: header name to accepted values.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) >= 1 && size(k) <= 256)",message="header names must be 1 to 256 characters long"
	Headers map[string]HeaderValues `json:"headers,omitempty"`
	// hosts matched.
	// +optional
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:items:MaxLength=256
	Hosts []string `json:"hosts,omitempty"`
	// https_redirect_status_code returned when a route is https-only and receives http.
	// +optional
	// +kubebuilder:validation:Enum=426;301;302;307;308
	HTTPSRedirectStatusCode *int64 `json:"https_redirect_status_code,omitempty"`
	// methods matched.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=32
	Methods []string `json:"methods,omitempty"`
	// name of the route in Kong.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Name *string `json:"name,omitempty"`
	// path_handling controls how the service path and the request path are joined.
	// +optional
	// +kubebuilder:validation:Enum=v0;v1
	PathHandling *string `json:"path_handling,omitempty"`
	// paths matched.
	// +optional
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:items:MaxLength=1024
	Paths []string `json:"paths,omitempty"`
	// preserve_host forwards the request's Host header.
	// +optional
	PreserveHost *bool `json:"preserve_host,omitempty"`
	// protocols the route accepts.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=16
	Protocols []string `json:"protocols,omitempty"`
	// regex_priority orders regex paths.
	// +optional
	RegexPriority *int64 `json:"regex_priority,omitempty"`
	// request_buffering enables buffering of the request body.
	// +optional
	RequestBuffering *bool `json:"request_buffering,omitempty"`
	// response_buffering enables buffering of the response body.
	// +optional
	ResponseBuffering *bool `json:"response_buffering,omitempty"`
	// snis matched.
	// +optional
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:items:MaxLength=256
	Snis []string `json:"snis,omitempty"`
	// sources matched by stream routes.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Sources []Endpoint `json:"sources,omitempty"`
	// strip_path strips the matched path prefix from the upstream request.
	// +optional
	StripPath *bool `json:"strip_path,omitempty"`
	// tags of the route in Kong; the operator adds its own k8s-* tags.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:XValidation:rule="self.all(tag, size(tag) >= 1 && size(tag) <= 128)",message="tags entries must not be longer than 128 characters"
	Tags []string `json:"tags,omitempty"`
}

// KongRouteSpec declares a Kong route: either of a KongService (serviceRef) or service-less in a control plane
// (controlPlaneRef). A route with neither is not this operator's.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.controlPlaneRef) || has(self.controlPlaneRef)",message="controlPlaneRef is required once set"
// +kubebuilder:validation:XValidation:rule="!has(self.controlPlaneRef) || self.controlPlaneRef.type != 'kic'",message="KIC is not supported as control plane"
type KongRouteSpec struct {
	// controlPlaneRef is the control plane of a route without a service. With a serviceRef it may be left out; if
	// set, it must name the service's control plane.
	// +optional
	ControlPlaneRef *ControlPlaneRef `json:"controlPlaneRef,omitempty"`
	// serviceRef is the KongService the route sends traffic to; the route lives in that service's control plane.
	// +optional
	ServiceRef *ServiceRef `json:"serviceRef,omitempty"`
	// adopt takes an entity that already exists in Konnect over instead of creating one (Kong's spec.adopt). It
	// cannot change.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.adopt is immutable"
	Adopt *AdoptOptions `json:"adopt,omitempty"`

	KongRouteAPISpec `json:",inline"`
}

// KongRouteStatus is the route's state in Konnect.
type KongRouteStatus struct {
	// konnect is the Konnect entity the route is synchronised with.
	// +optional
	Konnect                    *KonnectEntityStatusWithControlPlaneAndServiceRefs `json:"konnect,omitempty"`
	konnectv1alpha1.SyncStatus `json:",inline"`

	// conditions: Programmed, KongServiceRefValid or ControlPlaneRefValid, APIAuthRefValid.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// KongRoute is a Kong Gateway route configured in Konnect.
// +kubebuilder:validation:XValidation:rule="!has(self.spec.controlPlaneRef) || !has(oldSelf.spec.controlPlaneRef) || !has(oldSelf.status) || !has(oldSelf.status.conditions) || !oldSelf.status.conditions.exists(c, c.type == 'Programmed' && c.status == 'True') || self.spec.controlPlaneRef == oldSelf.spec.controlPlaneRef",message="spec.controlPlaneRef is immutable when an entity is already Programmed"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=kr
// +kubebuilder:printcolumn:name="Programmed",type=string,JSONPath=`.status.conditions[?(@.type=="Programmed")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.konnect.id`
// +kubebuilder:printcolumn:name="OrgID",type=string,JSONPath=`.status.konnect.organizationID`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KongRoute struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KongRouteSpec   `json:"spec"`
	Status KongRouteStatus `json:"status,omitempty"`
}

// KongRouteList is a list of KongRoutes.
// +kubebuilder:object:root=true
type KongRouteList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KongRoute `json:"items"`
}

// GetAdoptOptions returns spec.adopt (the entity reconciler adopts through it).
func (o *KongRoute) GetAdoptOptions() *AdoptOptions { return o.Spec.Adopt }
