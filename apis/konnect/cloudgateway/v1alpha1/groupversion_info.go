// Package v1alpha1 holds the Dedicated Cloud Gateway kinds of konnect.konghq.com/v1alpha1 (Kong's operator's
// KonnectCloudGatewayNetwork, KonnectCloudGatewayDataPlaneGroupConfiguration and KonnectCloudGatewayTransitGateway).
// They are a package of their own beside apis/konnect/v1alpha1 because they reference control planes with
// configuration.konghq.com's ControlPlaneRef, and that package imports apis/konnect/v1alpha1.
//
// +kubebuilder:object:generate=true
// +groupName=konnect.konghq.com
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is konnect.konghq.com/v1alpha1.
	GroupVersion = schema.GroupVersion{Group: "konnect.konghq.com", Version: "v1alpha1"}

	// SchemeBuilder registers the types of this package with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&KonnectCloudGatewayNetwork{}, &KonnectCloudGatewayNetworkList{},
		&KonnectCloudGatewayDataPlaneGroupConfiguration{}, &KonnectCloudGatewayDataPlaneGroupConfigurationList{},
		&KonnectCloudGatewayTransitGateway{}, &KonnectCloudGatewayTransitGatewayList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// ObjectRefType says how an ObjectRef names its object.
// +kubebuilder:validation:Enum=namespacedRef;konnectID
type ObjectRefType string

// Object reference types, as in Kong's operator.
const (
	ObjectRefNamespacedRef ObjectRefType = "namespacedRef"
	ObjectRefKonnectID     ObjectRefType = "konnectID"
)

// ObjectRef names a network: a KonnectCloudGatewayNetwork of the referrer's namespace, or a Konnect network by ID
// (Kong's operator's commonv1alpha1.ObjectRef).
// +kubebuilder:validation:XValidation:rule="self.type != 'namespacedRef' || has(self.namespacedRef)",message="when type is namespacedRef, namespacedRef must be set"
// +kubebuilder:validation:XValidation:rule="self.type != 'konnectID' || has(self.konnectID)",message="when type is konnectID, konnectID must be set"
type ObjectRef struct {
	// type is namespacedRef or konnectID.
	// +required
	Type ObjectRefType `json:"type"`
	// konnectID is the Konnect ID of the network, for type konnectID.
	// +optional
	KonnectID *string `json:"konnectID,omitempty"`
	// namespacedRef names a KonnectCloudGatewayNetwork of the referrer's namespace, for type namespacedRef.
	// +optional
	NamespacedRef *NamespacedRef `json:"namespacedRef,omitempty"`
}

// NamespacedRef names an object of the referrer's namespace.
// +kubebuilder:validation:XValidation:rule="!has(self.__namespace__) || size(self.__namespace__) == 0",message="cross-namespace references are not supported for networks"
type NamespacedRef struct {
	// name of the object.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// namespace is accepted only empty (as in Kong's operator).
	// +optional
	Namespace *string `json:"namespace,omitempty"`
}

// StateStatus is what Konnect reports about a provisioned entity besides its ID: its state, and why it is in an
// erroneous one.
type StateStatus struct {
	// state is the entity's state in Konnect, e.g. initializing, ready, offline, terminating.
	// +optional
	State string `json:"state,omitempty"`
}
