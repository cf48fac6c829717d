package v1alpha1

import (
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
)

// ControlPlaneRefType says how a control plane is referenced.
// +kubebuilder:validation:Enum=konnectID;konnectNamespacedRef;kic
type ControlPlaneRefType string

// Control plane reference types, as in Kong's operator.
const (
	// ControlPlaneRefKonnectNamespacedRef references a KonnectGatewayControlPlane object by name: this operator
	// syncs the object to that control plane in Konnect.
	ControlPlaneRefKonnectNamespacedRef ControlPlaneRefType = "konnectNamespacedRef"
	// ControlPlaneRefKonnectID references a Konnect control plane by its ID. Like Kong's operator, the API refuses
	// it for the kinds here: mirror the control plane (a KonnectGatewayControlPlane with source Mirror) and
	// reference that instead.
	ControlPlaneRefKonnectID ControlPlaneRefType = "konnectID"
	// ControlPlaneRefKIC (the default) means the object is configuration for Kong Ingress Controller, not for
	// Konnect: this operator leaves it alone.
	ControlPlaneRefKIC ControlPlaneRefType = "kic"
)

// KonnectIDType is the ID of a Konnect entity.
// +kubebuilder:validation:Pattern=`^[0-9a-f]{8}(?:\-[0-9a-f]{4}){3}-[0-9a-f]{12}$`
type KonnectIDType string

// ControlPlaneRef references the control plane an entity belongs to.
// +kubebuilder:validation:XValidation:rule="self.type != 'konnectID'",message="'konnectID' type is not supported: reference a KonnectGatewayControlPlane (source Mirror for an existing control plane) with konnectNamespacedRef"
// +kubebuilder:validation:XValidation:rule="self.type != 'konnectNamespacedRef' || has(self.konnectNamespacedRef)",message="when type is konnectNamespacedRef, konnectNamespacedRef must be set"
// +kubebuilder:validation:XValidation:rule="self.type != 'konnectNamespacedRef' || !has(self.konnectID)",message="when type is konnectNamespacedRef, konnectID must not be set"
// +kubebuilder:validation:XValidation:rule="self.type != 'konnectID' || has(self.konnectID)",message="when type is konnectID, konnectID must be set"
// +kubebuilder:validation:XValidation:rule="self.type != 'kic' || (!has(self.konnectID) && !has(self.konnectNamespacedRef))",message="when type is kic, konnectID and konnectNamespacedRef must not be set"
type ControlPlaneRef struct {
	// type is the kind of reference: konnectNamespacedRef (a KonnectGatewayControlPlane, the only one this operator
	// syncs), konnectID (refused, as in Kong's operator) or kic (the default: Kong Ingress Controller configuration,
	// ignored by this operator).
	// +optional
	// +kubebuilder:default=kic
	Type ControlPlaneRefType `json:"type,omitempty"`
	// konnectID is the Konnect ID of a control plane, for type konnectID.
	// +optional
	KonnectID *KonnectIDType `json:"konnectID,omitempty"`
	// konnectNamespacedRef names a KonnectGatewayControlPlane, for type konnectNamespacedRef.
	// +optional
	KonnectNamespacedRef *KonnectNamespacedRef `json:"konnectNamespacedRef,omitempty"`
}

// ForKonnect says whether the reference puts the object in Konnect's hands, i.e. this operator's.
func (r *ControlPlaneRef) ForKonnect() bool {
	return r != nil && r.Type == ControlPlaneRefKonnectNamespacedRef
}

// KonnectNamespacedRef names a KonnectGatewayControlPlane.
type KonnectNamespacedRef struct {
	// name of the KonnectGatewayControlPlane.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// namespace of the KonnectGatewayControlPlane; the object's own when empty. Another namespace is used only where
	// a KongReferenceGrant in it allows this kind from the object's namespace to the KonnectGatewayControlPlane.
	// +optional
	// +kubebuilder:validation:MaxLength=63
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
