package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
)

// KonnectCloudGatewayNetwork is a Dedicated Cloud Gateway network in Konnect. Konnect takes minutes to provision
// one: it is Programmed only once Konnect reports it ready; until then the Programmed condition carries its state.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=kong;konnect
// +kubebuilder:printcolumn:name="Programmed",type=string,JSONPath=`.status.conditions[?(@.type=='Programmed')].status`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.id`
// +kubebuilder:printcolumn:name="OrgID",type=string,JSONPath=`.status.organizationID`
type KonnectCloudGatewayNetwork struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec KonnectCloudGatewayNetworkSpec `json:"spec"`
	// +optional
	Status KonnectCloudGatewayNetworkStatus `json:"status,omitempty"`
}

// KonnectCloudGatewayNetworkSpec is Konnect's CreateNetworkRequest and the auth configuration. Konnect changes only
// a network's name (update-network takes name alone): its provider, region, zones, CIDR block and initial state are
// immutable here.
// +kubebuilder:validation:XValidation:rule="has(self.state) == has(oldSelf.state) && (!has(self.state) || self.state == oldSelf.state)",message="state is immutable: it is the network's initial state, and Konnect's update-network cannot change it"
type KonnectCloudGatewayNetworkSpec struct {
	// name of the network in Konnect; a change renames it there (update-network).
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// cloud_gateway_provider_account_id is the provider account the network is made in.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="cloud_gateway_provider_account_id is immutable"
	CloudGatewayProviderAccountID string `json:"cloud_gateway_provider_account_id"`
	// region is the cloud provider region.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="region is immutable"
	Region string `json:"region"`
	// availability_zones the network is attached to.
	// +required
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=5
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="availability_zones is immutable"
	AvailabilityZones []string `json:"availability_zones"`
	// cidr_block of the network.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="cidr_block is immutable"
	CidrBlock string `json:"cidr_block"`
	// state is the initial state: initializing (the default: provision it) or offline.
	// +optional
	// +kubebuilder:validation:Enum=initializing;offline
	State *string `json:"state,omitempty"`
	// konnect names the KonnectAPIAuthConfiguration the network is made with.
	// +required
	KonnectConfiguration konnectv1alpha1.KonnectConfiguration `json:"konnect"`
	// adopt takes a network that already exists in Konnect over by its ID instead of creating one (Kong's
	// spec.adopt). Mode match takes it only if it equals the spec; override renames it to spec.name (the other
	// fields cannot change in Konnect, so they must match either way). It cannot change.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.adopt is immutable"
	Adopt *configurationv1alpha1.AdoptOptions `json:"adopt,omitempty"`
}

// KonnectCloudGatewayNetworkStatus is the network's Konnect ID, organization, server and state.
type KonnectCloudGatewayNetworkStatus struct {
	// conditions: Programmed (True once Konnect reports the network ready), APIAuthResolvedRef.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	konnectv1alpha1.KonnectEntityStatus `json:",inline"`
	StateStatus                         `json:",inline"`
}

// KonnectCloudGatewayNetworkList is a list of KonnectCloudGatewayNetwork.
// +kubebuilder:object:root=true
type KonnectCloudGatewayNetworkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KonnectCloudGatewayNetwork `json:"items"`
}

// GetAdoptOptions returns spec.adopt.
func (o *KonnectCloudGatewayNetwork) GetAdoptOptions() *configurationv1alpha1.AdoptOptions {
	return o.Spec.Adopt
}
