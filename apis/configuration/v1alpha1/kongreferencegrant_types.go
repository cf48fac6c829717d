package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// KongReferenceGrant lets objects of the kinds and namespaces in spec.from reference objects of the kinds (and
// names) in spec.to in the grant's own namespace. A reference from another namespace (a KongService naming a
// KonnectGatewayControlPlane in namespace kong, a cluster-scoped KongVault naming one in any namespace) is valid only
// where a grant in the referenced object's namespace allows it, as in Kong's operator. It has no status.
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=krg,categories=kong
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KongReferenceGrant struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says who may reference what.
	// +optional
	Spec KongReferenceGrantSpec `json:"spec,omitempty"`
}

// KongReferenceGrantList is a list of KongReferenceGrants.
// +kubebuilder:object:root=true
type KongReferenceGrantList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KongReferenceGrant `json:"items"`
}

// KongReferenceGrantSpec: every entry of from may reference every entry of to (entries of a list are alternatives).
type KongReferenceGrantSpec struct {
	// from are the kinds and namespaces that may reference the objects of to.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	From []ReferenceGrantFrom `json:"from"`
	// to are the kinds (and optionally names) in the grant's namespace that may be referenced.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	To []ReferenceGrantTo `json:"to"`
}

// ReferenceGrantFrom is a kind of referrer in one namespace.
type ReferenceGrantFrom struct {
	// group of the referrer, e.g. configuration.konghq.com.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Group string `json:"group"`
	// kind of the referrer, e.g. KongService.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`
	// namespace of the referrer; "" for a cluster-scoped referrer (KongVault).
	// +required
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
}

// ReferenceGrantTo is a kind (and optionally one name) that may be referenced.
type ReferenceGrantTo struct {
	// group of the referenced object, e.g. konnect.konghq.com.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Group string `json:"group"`
	// kind of the referenced object, e.g. KonnectGatewayControlPlane.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`
	// name of the referenced object; every object of the kind in the grant's namespace when unset.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name *string `json:"name,omitempty"`
}
