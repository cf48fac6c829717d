package v1alpha2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	Host string `json:"host"`
	// port of the proxy URL.
	// +required
	Port int64 `json:"port"`
	// protocol of the proxy URL.
	// +required
	Protocol string `json:"protocol"`
}

// CreateControlPlaneRequest is the Konnect control plane to create (the body of Konnect's create call).
type CreateControlPlaneRequest struct {
	// name of the control plane in Konnect.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// description of the control plane.
	// +optional
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
	ProxyUrls []ProxyURL `json:"proxy_urls,omitempty"`
	// labels are Konnect labels of the control plane. Keys starting with "k8s" or "konnect" are reserved by Konnect
	// and the operator.
	// +optional
	// +kubebuilder:validation:MaxProperties=40
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('k8s') && !k.startsWith('konnect'))",message="label keys starting with k8s or konnect are reserved"
	Labels map[string]string `json:"labels,omitempty"`
}

// KonnectGatewayControlPlaneSpec declares a Konnect gateway control plane.
type KonnectGatewayControlPlaneSpec struct {
	// createControlPlaneRequest is the control plane to create and keep as declared in Konnect.
	// +required
	CreateControlPlaneRequest CreateControlPlaneRequest `json:"createControlPlaneRequest"`

	// konnect says which KonnectAPIAuthConfiguration to use.
	// +required
	KonnectConfiguration konnectv1alpha1.KonnectConfiguration `json:"konnect"`
}

// KonnectGatewayControlPlaneStatus is the control plane's state in Konnect.
type KonnectGatewayControlPlaneStatus struct {
	konnectv1alpha1.KonnectEntityStatus `json:",inline"`
	konnectv1alpha1.SyncStatus          `json:",inline"`

	// conditions: Programmed and APIAuthRefValid.
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
