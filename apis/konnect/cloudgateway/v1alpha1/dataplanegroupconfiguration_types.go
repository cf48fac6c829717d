package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
)

// KonnectCloudGatewayDataPlaneGroupConfiguration is a control plane's Dedicated Cloud Gateway configuration: where
// its data plane groups run (networks) and how many instances. Konnect keeps one configuration per control plane;
// deleting the object puts an empty one (no data plane groups) in its place, as Kong's operator does.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=kong;konnect
// +kubebuilder:printcolumn:name="Programmed",type=string,JSONPath=`.status.conditions[?(@.type=='Programmed')].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.id`
// +kubebuilder:printcolumn:name="ControlPlaneID",type=string,JSONPath=`.status.controlPlaneID`
// +kubebuilder:printcolumn:name="OrgID",type=string,JSONPath=`.status.organizationID`
type KonnectCloudGatewayDataPlaneGroupConfiguration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec KonnectCloudGatewayDataPlaneGroupConfigurationSpec `json:"spec"`
	// +optional
	Status KonnectCloudGatewayDataPlaneGroupConfigurationStatus `json:"status,omitempty"`
}

// KonnectCloudGatewayDataPlaneGroupConfigurationSpec is Konnect's CreateConfigurationRequest with references.
type KonnectCloudGatewayDataPlaneGroupConfigurationSpec struct {
	// version is the Kong Gateway version of the data planes.
	// +required
	// +kubebuilder:validation:MinLength=1
	Version string `json:"version"`
	// dataplane_groups say where to deploy data planes, and how many.
	// +optional
	DataplaneGroups []KonnectConfigurationDataPlaneGroup `json:"dataplane_groups,omitempty"`
	// api_access of the data plane groups.
	// +optional
	// +kubebuilder:default=private+public
	// +kubebuilder:validation:Enum=private;public;private+public
	APIAccess *string `json:"api_access,omitempty"`
	// controlPlaneRef names the KonnectGatewayControlPlane the data planes connect to.
	// +required
	ControlPlaneRef configurationv1alpha1.ControlPlaneRef `json:"controlPlaneRef"`
	// adopt takes the control plane's configuration that already exists in Konnect over by its ID (Kong's
	// spec.adopt). Mode match takes it only if it equals the spec (version, api_access, data plane groups);
	// override puts the spec in its place. It cannot change.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.adopt is immutable"
	Adopt *configurationv1alpha1.AdoptOptions `json:"adopt,omitempty"`
}

// KonnectConfigurationDataPlaneGroup is one data plane group.
type KonnectConfigurationDataPlaneGroup struct {
	// provider is the cloud provider (aws, azure, gcp).
	// +required
	Provider string `json:"provider"`
	// region of the cloud provider.
	// +required
	Region string `json:"region"`
	// networkRef names the network the group is deployed on.
	// +required
	NetworkRef ObjectRef `json:"networkRef"`
	// autoscale of the group.
	// +required
	Autoscale ConfigurationDataPlaneGroupAutoscale `json:"autoscale"`
	// environment variables of the group's data planes (KONG_*).
	// +optional
	Environment []ConfigurationDataPlaneGroupEnvironmentField `json:"environment,omitempty"`
}

// ConfigurationDataPlaneGroupEnvironmentField is one environment variable.
type ConfigurationDataPlaneGroupEnvironmentField struct {
	// name of the variable, prefixed KONG_.
	// +required
	// +kubebuilder:validation:Pattern="^KONG_."
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// value of the variable.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Value string `json:"value"`
}

// ConfigurationDataPlaneGroupAutoscale is a static or autopilot autoscale.
// +kubebuilder:validation:XValidation:rule="self.type == 'static' ? has(self.static) : has(self.autopilot)",message="static or autopilot must be set as type says"
type ConfigurationDataPlaneGroupAutoscale struct {
	// static instances.
	// +optional
	Static *ConfigurationDataPlaneGroupAutoscaleStatic `json:"static,omitempty"`
	// autopilot by requests per second.
	// +optional
	Autopilot *ConfigurationDataPlaneGroupAutoscaleAutopilot `json:"autopilot,omitempty"`
	// type: static or autopilot.
	// +required
	// +kubebuilder:validation:Enum=static;autopilot
	Type string `json:"type"`
}

// ConfigurationDataPlaneGroupAutoscaleAutopilot scales by requests per second.
type ConfigurationDataPlaneGroupAutoscaleAutopilot struct {
	// base_rps the group supports.
	// +required
	BaseRps int64 `json:"base_rps"`
	// max_rps the group supports (default 10x base_rps).
	// +optional
	MaxRps *int64 `json:"max_rps,omitempty"`
}

// ConfigurationDataPlaneGroupAutoscaleStatic is a fixed number of instances.
type ConfigurationDataPlaneGroupAutoscaleStatic struct {
	// instance_type: small, medium or large.
	// +required
	InstanceType string `json:"instance_type"`
	// requested_instances of the group.
	// +required
	RequestedInstances int64 `json:"requested_instances"`
}

// KonnectCloudGatewayDataPlaneGroupConfigurationStatus is the configuration's Konnect ID, control plane,
// organization, server, and the data plane groups Konnect deployed.
type KonnectCloudGatewayDataPlaneGroupConfigurationStatus struct {
	// conditions: Programmed, ControlPlaneRefValid, NetworkRefValid.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	konnectv1alpha1.KonnectEntityStatus `json:",inline"`
	// controlPlaneID is the Konnect ID of the control plane.
	// +optional
	ControlPlaneID string `json:"controlPlaneID,omitempty"`
	// dataplane_groups Konnect deployed, with their states.
	// +optional
	DataPlaneGroups []KonnectCloudGatewayDataPlaneGroupConfigurationStatusGroup `json:"dataplane_groups,omitempty"`
}

// KonnectCloudGatewayDataPlaneGroupConfigurationStatusGroup is one deployed data plane group.
type KonnectCloudGatewayDataPlaneGroupConfigurationStatusGroup struct {
	// id of the data plane group.
	ID string `json:"id"`
	// cloud_gateway_network_id of its network.
	// +optional
	CloudGatewayNetworkID string `json:"cloud_gateway_network_id,omitempty"`
	// provider of the group.
	Provider string `json:"provider"`
	// region of the group.
	Region string `json:"region"`
	// state of the group: created, initializing, ready, terminating, terminated.
	State string `json:"state"`
}

// KonnectCloudGatewayDataPlaneGroupConfigurationList is a list of KonnectCloudGatewayDataPlaneGroupConfiguration.
// +kubebuilder:object:root=true
type KonnectCloudGatewayDataPlaneGroupConfigurationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KonnectCloudGatewayDataPlaneGroupConfiguration `json:"items"`
}

// GetAdoptOptions returns spec.adopt.
func (o *KonnectCloudGatewayDataPlaneGroupConfiguration) GetAdoptOptions() *configurationv1alpha1.AdoptOptions {
	return o.Spec.Adopt
}
