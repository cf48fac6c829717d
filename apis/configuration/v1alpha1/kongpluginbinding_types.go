package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
)

// KongPluginBindingScope says where a binding applies its plugin.
// +kubebuilder:validation:Enum=OnlyTargets;GlobalInControlPlane
type KongPluginBindingScope string

// Binding scopes, as in Kong's operator.
const (
	// KongPluginBindingScopeOnlyTargets applies the plugin to the targets only (the default).
	KongPluginBindingScopeOnlyTargets KongPluginBindingScope = "OnlyTargets"
	// KongPluginBindingScopeGlobalInControlPlane applies the plugin to everything in the control plane: a global
	// plugin. No targets may be set.
	KongPluginBindingScopeGlobalInControlPlane KongPluginBindingScope = "GlobalInControlPlane"
)

// PluginRef names the KongPlugin a binding applies.
type PluginRef struct {
	// name of the KongPlugin, in the binding's namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// kind is KongPlugin (the default). KongClusterPlugin is accepted by the API for compatibility and reported as
	// unsupported.
	// +optional
	// +kubebuilder:validation:Enum=KongPlugin;KongClusterPlugin
	// +kubebuilder:default=KongPlugin
	Kind *string `json:"kind,omitempty"`
}

// TargetRef names a target in the binding's namespace.
type TargetRef struct {
	// name of the object.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// TargetRefWithGroupKind names a target of a kind that several APIs have (this operator syncs KongService and
// KongRoute, group configuration.konghq.com).
type TargetRefWithGroupKind struct {
	// name of the object.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// kind of the object.
	// +required
	// +kubebuilder:validation:Enum=Service;Ingress;KongRoute;KongService;HTTPRoute;GRPCRoute
	Kind string `json:"kind"`
	// group of the object.
	// +required
	// +kubebuilder:validation:Enum=core;networking.k8s.io;gateway.networking.k8s.io;configuration.konghq.com
	Group string `json:"group"`
}

// KongPluginBindingTargets are what a plugin applies to; a combination narrows it (e.g. a consumer on one route).
// +kubebuilder:validation:XValidation:rule="has(self.routeRef) || has(self.serviceRef) || has(self.consumerRef) || has(self.consumerGroupRef)",message="At least one target reference must be set when scope is 'OnlyTargets'"
// +kubebuilder:validation:XValidation:rule="!(has(self.consumerRef) && has(self.consumerGroupRef))",message="Cannot set Consumer and ConsumerGroup at the same time"
// +kubebuilder:validation:XValidation:rule="!has(self.routeRef) || self.routeRef.group == 'configuration.konghq.com' && self.routeRef.kind == 'KongRoute'",message="routeRef must be a KongRoute of group configuration.konghq.com"
// +kubebuilder:validation:XValidation:rule="!has(self.serviceRef) || self.serviceRef.group == 'configuration.konghq.com' && self.serviceRef.kind == 'KongService'",message="serviceRef must be a KongService of group configuration.konghq.com"
type KongPluginBindingTargets struct {
	// routeRef names a KongRoute.
	// +optional
	RouteReference *TargetRefWithGroupKind `json:"routeRef,omitempty"`
	// serviceRef names a KongService.
	// +optional
	ServiceReference *TargetRefWithGroupKind `json:"serviceRef,omitempty"`
	// consumerRef names a KongConsumer.
	// +optional
	ConsumerReference *TargetRef `json:"consumerRef,omitempty"`
	// consumerGroupRef names a KongConsumerGroup.
	// +optional
	ConsumerGroupReference *TargetRef `json:"consumerGroupRef,omitempty"`
}

// KongPluginBindingSpec binds a KongPlugin to its targets in a control plane.
// +kubebuilder:validation:XValidation:rule="self.scope != 'GlobalInControlPlane' || !has(self.targets)",message="No targets must be set when scope is 'GlobalInControlPlane'"
// +kubebuilder:validation:XValidation:rule="self.scope != 'OnlyTargets' || has(self.targets)",message="targets must be set when scope is 'OnlyTargets'"
// +kubebuilder:validation:XValidation:rule="has(self.targets) || has(self.controlPlaneRef)",message="controlPlaneRef is required for a global plugin (no targets)"
// +kubebuilder:validation:XValidation:rule="!has(self.controlPlaneRef) || self.controlPlaneRef.type != 'kic'",message="KIC is not supported as control plane"
type KongPluginBindingSpec struct {
	// pluginRef names the KongPlugin whose configuration is applied.
	// +required
	PluginReference PluginRef `json:"pluginRef"`
	// targets the plugin applies to. Their control plane is the binding's.
	// +optional
	Targets *KongPluginBindingTargets `json:"targets,omitempty"`
	// controlPlaneRef is the control plane of the plugin: required for a global plugin, and when set with targets
	// it must be theirs.
	// +optional
	ControlPlaneRef *ControlPlaneRef `json:"controlPlaneRef,omitempty"`
	// scope is OnlyTargets (the default) or GlobalInControlPlane.
	// +optional
	// +kubebuilder:default=OnlyTargets
	Scope KongPluginBindingScope `json:"scope,omitempty"`
}

// KongPluginBindingStatus is the plugin's state in Konnect.
type KongPluginBindingStatus struct {
	// konnect is the Konnect plugin entity the binding is synchronised with.
	// +optional
	Konnect                    *KonnectEntityStatusWithControlPlaneRef `json:"konnect,omitempty"`
	konnectv1alpha1.SyncStatus `json:",inline"`

	// conditions: Programmed, KongPluginRefValid, the target references' conditions, ControlPlaneRefValid,
	// APIAuthRefValid.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// KongPluginBinding applies a KongPlugin to services, routes, consumers or consumer groups in Konnect, or to a whole
// control plane (a global plugin): it is the Konnect plugin entity.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.conditions) || !oldSelf.status.conditions.exists(c, c.type == 'Programmed' && c.status == 'True') || (!has(self.spec.controlPlaneRef) && !has(oldSelf.spec.controlPlaneRef)) || (has(self.spec.controlPlaneRef) && has(oldSelf.spec.controlPlaneRef) && self.spec.controlPlaneRef == oldSelf.spec.controlPlaneRef)",message="spec.controlPlaneRef is immutable when an entity is already Programmed"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=kpb
// +kubebuilder:printcolumn:name="Plugin-Kind",type=string,JSONPath=`.spec.pluginRef.kind`,description="Kind of the plugin"
// +kubebuilder:printcolumn:name="Plugin-Name",type=string,JSONPath=`.spec.pluginRef.name`,description="Name of the plugin"
// +kubebuilder:printcolumn:name="Programmed",type=string,JSONPath=`.status.conditions[?(@.type=="Programmed")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.konnect.id`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KongPluginBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KongPluginBindingSpec   `json:"spec"`
	Status KongPluginBindingStatus `json:"status,omitempty"`
}

// KongPluginBindingList is a list of KongPluginBindings.
// +kubebuilder:object:root=true
type KongPluginBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KongPluginBinding `json:"items"`
}
