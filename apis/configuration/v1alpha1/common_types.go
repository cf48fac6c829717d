package v1alpha1

import (
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
)

// ControlPlaneRefType says how a control plane is referenced.
// +kubebuilder:validation:Enum=konnectNamespacedRef
type ControlPlaneRefType string

// ControlPlaneRefKonnectNamespacedRef references a KonnectGatewayControlPlane object by name.
const ControlPlaneRefKonnectNamespacedRef ControlPlaneRefType = "konnectNamespacedRef"

// ControlPlaneRef references the Konnect control plane an entity belongs to.
// +kubebuilder:validation:XValidation:rule="self.type != 'konnectNamespacedRef' || has(self.konnectNamespacedRef)",message="type konnectNamespacedRef requires konnectNamespacedRef"
type ControlPlaneRef struct {
	// type is the kind of reference; only konnectNamespacedRef (a KonnectGatewayControlPlane) is supported.
	// +required
	Type ControlPlaneRefType `json:"type"`
	// konnectNamespacedRef names a KonnectGatewayControlPlane.
	// +optional
	KonnectNamespacedRef *KonnectNamespacedRef `json:"konnectNamespacedRef,omitempty"`
}

// KonnectNamespacedRef names a KonnectGatewayControlPlane.
// +kubebuilder:validation:XValidation:rule="!has(self.__namespace__) || size(self.__namespace__) == 0",message="cross-namespace references are not supported: leave namespace empty"
type KonnectNamespacedRef struct {
	// name of the KonnectGatewayControlPlane.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// namespace of the KonnectGatewayControlPlane; only the object's own namespace is supported.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// KonnectEntityStatusWithControlPlaneRef is the Konnect status of an entity that lives in a control plane.
type KonnectEntityStatusWithControlPlaneRef struct {
	konnectv1alpha1.KonnectEntityStatus `json:",inline"`
	// controlPlaneID is the Konnect ID of the control plane the entity lives in.
	// +optional
	ControlPlaneID string `json:"controlPlaneID,omitempty"`
}

// KonnectEntityStatusWithControlPlaneAndServiceRefs is the Konnect status of an entity that may belong to a service.
type KonnectEntityStatusWithControlPlaneAndServiceRefs struct {
	KonnectEntityStatusWithControlPlaneRef `json:",inline"`
	// serviceID is the Konnect ID of the service the entity belongs to.
	// +optional
	ServiceID string `json:"serviceID,omitempty"`
}
