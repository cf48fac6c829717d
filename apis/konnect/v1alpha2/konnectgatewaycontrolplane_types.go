package v1alpha2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
)

// ClusterType is the kind of Konnect control plane.
// +kubebuilder:validation:Enum=CLUSTER_TYPE_CONTROL_PLANE;CLUSTER_TYPE_K8S_INGRESS_CONTROLLER;CLUSTER_TYPE_CONTROL_PLANE_GROUP;CLUSTER_TYPE_SERVERLESS
type ClusterType string

// AuthType is how data planes authenticate to a control plane.
// +kubebuilder:validation:Enum=pinned_client_certs;pki_client_certs
type AuthType string

// ProxyURL is a URL through which data planes of a control plane can be reached.
type ProxyURL struct {
	// host of the proxy URL.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Host string `json:"host"`
	// port of the proxy URL.
	// +required
	Port int64 `json:"port"`
	// protocol of the proxy URL.
	// +required
	// +kubebuilder:validation:MaxLength=16
	Protocol string `json:"protocol"`
}

// CreateControlPlaneRequest is the Konnect control plane to create (the body of Konnect's create call).
type CreateControlPlaneRequest struct {
	// name of the control plane in Konnect.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`
	// description of the control plane.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Description *string `json:"description,omitempty"`
	// cluster_type of the control plane; it cannot change once created.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="cluster_type is immutable"
	ClusterType *ClusterType `json:"cluster_type,omitempty"`
	// auth_type is how data planes authenticate: pinned_client_certs or pki_client_certs.
	// +optional
	AuthType *AuthType `json:"auth_type,omitempty"`
	// cloud_gateway says whether this control plane serves cloud gateways; it cannot change once created.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="cloud_gateway is immutable"
	CloudGateway *bool `json:"cloud_gateway,omitempty"`
	// proxy_urls are the URLs through which the data planes can be reached.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	ProxyUrls []ProxyURL `json:"proxy_urls,omitempty"`
	// labels are Konnect labels of the control plane. Keys starting with "k8s" or "konnect" are reserved by Konnect
	// and the operator.
	// +optional
	// +kubebuilder:validation:MaxProperties=40
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) >= 1 && size(k) <= 63 && size(self[k]) >= 1 && size(self[k]) <= 63)",message="label keys and values must be 1 to 63 characters long"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('k8s') && !k.startsWith('konnect'))",message="label keys starting with k8s or konnect are reserved"
	Labels map[string]string `json:"labels,omitempty"`
}

// EntitySource says where a Konnect entity comes from.
// +kubebuilder:validation:Enum=Origin;Mirror
type EntitySource string

const (
	// EntitySourceOrigin: the operator creates the control plane and keeps it as declared.
	EntitySourceOrigin EntitySource = "Origin"
	// EntitySourceMirror: the control plane exists in Konnect already; the operator only looks it up by ID, so
	// that other objects can reference it, and never changes or deletes it.
	EntitySourceMirror EntitySource = "Mirror"
)

// KonnectIDType is the ID of a Konnect entity.
// +kubebuilder:validation:Pattern=`^[0-9a-f]{8}(?:\-[0-9a-f]{4}){3}-[0-9a-f]{12}$`
type KonnectIDType string

// MirrorSpec names the Konnect control plane a Mirror stands for.
type MirrorSpec struct {
	// konnect holds the control plane's Konnect ID.
	// +required
	Konnect MirrorKonnect `json:"konnect"`
}

// MirrorKonnect is the Konnect side of a mirror.
type MirrorKonnect struct {
	// id of the control plane in Konnect.
	// +required
	ID KonnectIDType `json:"id"`
}

// KonnectGatewayControlPlaneSpec declares a Konnect gateway control plane.
// +kubebuilder:validation:XValidation:rule="!has(self.source) || self.source != 'Mirror' || !has(self.createControlPlaneRequest)",message="createControlPlaneRequest fields cannot be set for type Mirror"
// +kubebuilder:validation:XValidation:rule="!has(self.source) || self.source != 'Mirror' || has(self.mirror)",message="mirror field must be set for type Mirror"
// +kubebuilder:validation:XValidation:rule="(has(self.source) && self.source == 'Mirror') || !has(self.mirror)",message="mirror field cannot be set for type Origin"
// +kubebuilder:validation:XValidation:rule="(has(self.source) && self.source == 'Mirror') || has(self.createControlPlaneRequest)",message="spec.createControlPlaneRequest must be set for type Origin"
// +kubebuilder:validation:XValidation:rule="!has(self.source) && !has(oldSelf.source) ? true : (has(self.source) && has(oldSelf.source) && self.source == oldSelf.source)",message="spec.source is immutable"
// +kubebuilder:validation:XValidation:rule="!has(self.members) || (has(self.createControlPlaneRequest) && has(self.createControlPlaneRequest.cluster_type) && self.createControlPlaneRequest.cluster_type == 'CLUSTER_TYPE_CONTROL_PLANE_GROUP')",message="spec.members is only applicable for ControlPlanes that are created as groups"
// +kubebuilder:validation:XValidation:rule="!has(self.createControlPlaneRequest) || !has(self.createControlPlaneRequest.cluster_type) || self.createControlPlaneRequest.cluster_type != 'CLUSTER_TYPE_K8S_INGRESS_CONTROLLER' || !has(self.createControlPlaneRequest.cloud_gateway)",message="spec.createControlPlaneRequest.cloud_gateway cannot be set for spec.createControlPlaneRequest.cluster_type 'CLUSTER_TYPE_K8S_INGRESS_CONTROLLER'"
type KonnectGatewayControlPlaneSpec struct {
	// createControlPlaneRequest is the control plane to create and keep as declared in Konnect (source Origin).
	// +optional
	CreateControlPlaneRequest *CreateControlPlaneRequest `json:"createControlPlaneRequest,omitempty"`

	// mirror names the existing Konnect control plane this object stands for (source Mirror).
	// +optional
	Mirror *MirrorSpec `json:"mirror,omitempty"`

	// source is Origin (the default: the operator creates and owns the control plane) or Mirror (it exists in
	// Konnect already and is only looked up). It cannot change.
	// +optional
	// +kubebuilder:default=Origin
	Source *EntitySource `json:"source,omitempty"`

	// members are the KonnectGatewayControlPlanes (in this namespace) that belong to this control plane group;
	// only for cluster_type CLUSTER_TYPE_CONTROL_PLANE_GROUP. The group's membership in Konnect is kept equal to
	// this list.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	Members []corev1.LocalObjectReference `json:"members,omitempty"`

	// konnect says which KonnectAPIAuthConfiguration to use.
	// +optional
	KonnectConfiguration konnectv1alpha1.KonnectConfiguration `json:"konnect,omitempty"`
	// adopt takes an entity that already exists in Konnect over instead of creating one (Kong's spec.adopt). It
	// cannot change.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.adopt is immutable"
	Adopt *configurationv1alpha1.AdoptOptions `json:"adopt,omitempty"`
}

// IsMirror says whether the object mirrors an existing control plane instead of creating one.
func (s *KonnectGatewayControlPlaneSpec) IsMirror() bool {
	return s.Source != nil && *s.Source == EntitySourceMirror
}

// KonnectEndpoints are the addresses data planes use to reach the control plane.
type KonnectEndpoints struct {
	// controlPlane is the endpoint data planes get their configuration from.
	// +optional
	ControlPlaneEndpoint string `json:"controlPlane,omitempty"`
	// telemetry is the endpoint data planes send telemetry to.
	// +optional
	TelemetryEndpoint string `json:"telemetry,omitempty"`
}

// KonnectGatewayControlPlaneStatus is the control plane's state in Konnect.
type KonnectGatewayControlPlaneStatus struct {
	konnectv1alpha1.KonnectEntityStatus `json:",inline"`
	konnectv1alpha1.SyncStatus          `json:",inline"`

	// clusterType is the cluster type of the control plane, as Konnect reports it.
	// +optional
	ClusterType string `json:"clusterType,omitempty"`
	// konnectEndpoints are the control plane's endpoints for data planes, as Konnect reports them.
	// +optional
	Endpoints *KonnectEndpoints `json:"konnectEndpoints,omitempty"`

	// conditions: Programmed, APIAuthRefValid and, for groups, MembersRefValid.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// KonnectGatewayControlPlane is a Konnect gateway control plane managed from Kubernetes.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName=kgcp
// +kubebuilder:printcolumn:name="Programmed",type=string,JSONPath=`.status.conditions[?(@.type=="Programmed")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.id`
// +kubebuilder:printcolumn:name="OrgID",type=string,JSONPath=`.status.organizationID`
// +kubebuilder:printcolumn:name="Source",type=string,JSONPath=`.spec.source`,priority=1
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.status.clusterType`,priority=1
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.conditions) || !oldSelf.status.conditions.exists(c, c.type == 'Programmed' && c.status == 'True') || self.spec.konnect.authRef == oldSelf.spec.konnect.authRef",message="spec.konnect.authRef is immutable when an entity is already Programmed"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KonnectGatewayControlPlane struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KonnectGatewayControlPlaneSpec   `json:"spec,omitempty"`
	Status KonnectGatewayControlPlaneStatus `json:"status,omitempty"`
}

// KonnectGatewayControlPlaneList is a list of KonnectGatewayControlPlanes.
// +kubebuilder:object:root=true
type KonnectGatewayControlPlaneList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KonnectGatewayControlPlane `json:"items"`
}

// GetAdoptOptions returns spec.adopt (the entity reconciler adopts through it).
func (o *KonnectGatewayControlPlane) GetAdoptOptions() *configurationv1alpha1.AdoptOptions {
	return o.Spec.Adopt
}
