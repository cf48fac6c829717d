package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// KonnectEntityStatus says which Konnect entity an object is synchronised with.
type KonnectEntityStatus struct {
	// id is the Konnect entity's ID; empty until it has been created.
	// +optional
	ID string `json:"id,omitempty"`
	// serverURL is the Konnect API the entity lives in.
	// +optional
	ServerURL string `json:"serverURL,omitempty"`
	// organizationID is the Konnect organization the entity lives in.
	// +optional
	OrgID string `json:"organizationID,omitempty"`
}

// SyncStatus is the operator's bookkeeping of the last successful write to Konnect (an ALM addition to the
// Kong-compatible status; clients that do not know it ignore it).
type SyncStatus struct {
	// observedHash is a hash of what was last written to Konnect (spec, labels, annotations, parent IDs); a
	// different hash means the object changed and is written again at once.
	// +optional
	ObservedHash string `json:"observedHash,omitempty"`
	// lastSyncTime is when Konnect was last brought to the declared state.
	// +optional
	LastSyncTime *metav1.MicroTime `json:"lastSyncTime,omitempty"`
}

// KonnectConfiguration says which KonnectAPIAuthConfiguration an object uses.
type KonnectConfiguration struct {
	// authRef names a KonnectAPIAuthConfiguration in the object's namespace.
	// +required
	APIAuthConfigurationRef KonnectAPIAuthConfigurationRef `json:"authRef"`
}

// KonnectAPIAuthConfigurationRef names a KonnectAPIAuthConfiguration in the referrer's namespace.
// +kubebuilder:validation:XValidation:rule="!has(self.__namespace__) || size(self.__namespace__) == 0",message="cross-namespace references are not supported: the KonnectAPIAuthConfiguration must be in this object's namespace; leave namespace empty"
type KonnectAPIAuthConfigurationRef struct {
	// name of the KonnectAPIAuthConfiguration.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// namespace is accepted only empty: an object uses a KonnectAPIAuthConfiguration of its own namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
}
