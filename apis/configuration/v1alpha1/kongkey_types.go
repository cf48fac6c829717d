package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KeySetRefType says how a key set is referenced.
// +kubebuilder:validation:Enum=konnectID;namespacedRef
type KeySetRefType string

// Key set reference types, as in Kong's operator.
const (
	// KeySetRefKonnectID names a key set by its Konnect ID.
	KeySetRefKonnectID KeySetRefType = "konnectID"
	// KeySetRefNamespacedRef names a KongKeySet in the key's namespace.
	KeySetRefNamespacedRef KeySetRefType = "namespacedRef"
)

// KeySetRef references the key set a key is in.
// +kubebuilder:validation:XValidation:rule="self.type == 'namespacedRef' ? has(self.namespacedRef) : true",message="when type is namespacedRef, namespacedRef must be set"
// +kubebuilder:validation:XValidation:rule="self.type == 'konnectID' ? has(self.konnectID) : true",message="when type is konnectID, konnectID must be set"
type KeySetRef struct {
	// type is konnectID or namespacedRef.
	// +required
	Type KeySetRefType `json:"type"`
	// konnectID is the key set's Konnect ID, for type konnectID.
	// +optional
	KonnectID *string `json:"konnectID,omitempty"`
	// namespacedRef names a KongKeySet in this namespace, for type namespacedRef.
	// +optional
	NamespacedRef *ObjectNameRef `json:"namespacedRef,omitempty"`
}

// PEMKeyPair is a key pair in PEM format.
type PEMKeyPair struct {
	// private_key in PEM format.
	// +required
	// +kubebuilder:validation:MinLength=1
	PrivateKey string `json:"private_key"`
	// public_key in PEM format.
	// +required
	// +kubebuilder:validation:MinLength=1
	PublicKey string `json:"public_key"`
}

// KongKeyAPISpec is a key, as Konnect's API spells it.
// +kubebuilder:validation:XValidation:rule="has(self.jwk) || has(self.pem)",message="Either 'jwk' or 'pem' must be set"
type KongKeyAPISpec struct {
	// kid identifies the key; with jwk it must be the JWK's kid.
	// +required
	// +kubebuilder:validation:MinLength=1
	KID string `json:"kid"`
	// name of the key.
	// +optional
	Name *string `json:"name,omitempty"`
	// jwk is a JSON Web Key as a string.
	// +optional
	JWK *string `json:"jwk,omitempty"`
	// pem is a key pair in PEM format.
	// +optional
	PEM *PEMKeyPair `json:"pem,omitempty"`
	// tags of the key in Kong; the operator adds its own k8s-* tags.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	Tags []string `json:"tags,omitempty"`
}

// KongKeySpec declares a key in a Konnect control plane, optionally in a key set.
// +kubebuilder:validation:XValidation:rule="!has(self.controlPlaneRef) ? true : self.controlPlaneRef.type != 'kic'",message="KIC is not supported as control plane"
type KongKeySpec struct {
	// controlPlaneRef is the control plane the key lives in (type konnectNamespacedRef); a key in a KongKeySet must
	// be in the key set's control plane.
	// +optional
	ControlPlaneRef *ControlPlaneRef `json:"controlPlaneRef,omitempty"`
	// keySetRef is the key set the key is in.
	// +optional
	KeySetRef      *KeySetRef `json:"keySetRef,omitempty"`
	KongKeyAPISpec `json:",inline"`
	// adopt takes an entity that already exists in Konnect over instead of creating one (Kong's spec.adopt). It
	// cannot change.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.adopt is immutable"
	Adopt *AdoptOptions `json:"adopt,omitempty"`
}

// KongKeyStatus is the key's state in Konnect.
type KongKeyStatus struct {
	// konnect is the Konnect entity the key is synchronised with.
	// +optional
	Konnect             *KonnectEntityStatusWithControlPlaneAndKeySetRef `json:"konnect,omitempty"`
	GatewayEntityStatus `json:",inline"`
}

// KongKey is a key (JWK or PEM pair) configured in Konnect.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.spec.controlPlaneRef) || has(self.spec.controlPlaneRef)",message="controlPlaneRef is required once set"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.conditions) || !oldSelf.status.conditions.exists(c, c.type == 'Programmed' && c.status == 'True') || self.spec.controlPlaneRef == oldSelf.spec.controlPlaneRef",message="spec.controlPlaneRef is immutable when an entity is already Programmed"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=kong
// +kubebuilder:printcolumn:name="Programmed",type=string,JSONPath=`.status.conditions[?(@.type=="Programmed")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.konnect.id`
type KongKey struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KongKeySpec   `json:"spec"`
	Status KongKeyStatus `json:"status,omitempty"`
}

// KongKeyList is a list of KongKeys.
// +kubebuilder:object:root=true
type KongKeyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KongKey `json:"items"`
}

// KongKeySetAPISpec is a key set, as Konnect's API spells it.
type KongKeySetAPISpec struct {
	// name of the key set, unique in its control plane.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// tags of the key set in Kong; the operator adds its own k8s-* tags.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	Tags []string `json:"tags,omitempty"`
}

// KongKeySetSpec declares a key set in a Konnect control plane.
// +kubebuilder:validation:XValidation:rule="!has(self.controlPlaneRef) ? true : self.controlPlaneRef.type != 'kic'",message="KIC is not supported as control plane"
type KongKeySetSpec struct {
	// controlPlaneRef is the control plane the key set lives in (type konnectNamespacedRef).
	// +required
	ControlPlaneRef   *ControlPlaneRef `json:"controlPlaneRef"`
	KongKeySetAPISpec `json:",inline"`
	// adopt takes an entity that already exists in Konnect over instead of creating one (Kong's spec.adopt). It
	// cannot change.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.adopt is immutable"
	Adopt *AdoptOptions `json:"adopt,omitempty"`
}

// KongKeySetStatus is the key set's state in Konnect.
type KongKeySetStatus struct {
	// konnect is the Konnect entity the key set is synchronised with.
	// +optional
	Konnect             *KonnectEntityStatusWithControlPlaneRef `json:"konnect,omitempty"`
	GatewayEntityStatus `json:",inline"`
}

// KongKeySet is a key set configured in Konnect; KongKeys join it with keySetRef.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.conditions) || !oldSelf.status.conditions.exists(c, c.type == 'Programmed' && c.status == 'True') || self.spec.controlPlaneRef == oldSelf.spec.controlPlaneRef",message="spec.controlPlaneRef is immutable when an entity is already Programmed"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=kong
// +kubebuilder:printcolumn:name="Programmed",type=string,JSONPath=`.status.conditions[?(@.type=="Programmed")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.konnect.id`
type KongKeySet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KongKeySetSpec   `json:"spec"`
	Status KongKeySetStatus `json:"status,omitempty"`
}

// KongKeySetList is a list of KongKeySets.
// +kubebuilder:object:root=true
type KongKeySetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KongKeySet `json:"items"`
}

// KongVaultSpec declares a vault (a secret store plugin configuration can reference) in a Konnect control plane.
type KongVaultSpec struct {
	// backend is the vault's backend type (env, aws, gcp, hcv, azure, konnect, ...); Konnect's vault name.
	// +required
	// +kubebuilder:validation:MinLength=1
	Backend string `json:"backend"`
	// prefix of the vault references ({vault://<prefix>/...}); immutable.
	// +required
	// +kubebuilder:validation:MinLength=1
	Prefix string `json:"prefix"`
	// description of the vault.
	// +optional
	Description string `json:"description,omitempty"`
	// config of the vault; its fields depend on the backend.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Config apiextensionsv1.JSON `json:"config,omitempty"`
	// tags of the vault in Kong; the operator adds its own k8s-* tags.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	Tags []string `json:"tags,omitempty"`
	// controlPlaneRef is the control plane the vault lives in: type konnectNamespacedRef, naming the
	// KonnectGatewayControlPlane's namespace (a KongVault has none). Without one the vault is Kong Ingress
	// Controller configuration, which this operator leaves alone.
	// +optional
	ControlPlaneRef *ClusterControlPlaneRef `json:"controlPlaneRef,omitempty"`
	// adopt takes an entity that already exists in Konnect over instead of creating one (Kong's spec.adopt). It
	// cannot change.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.adopt is immutable"
	Adopt *AdoptOptions `json:"adopt,omitempty"`
}

// KongVaultStatus is the vault's state in Konnect.
type KongVaultStatus struct {
	// konnect is the Konnect entity the vault is synchronised with.
	// +optional
	Konnect             *KonnectEntityStatusWithControlPlaneRef `json:"konnect,omitempty"`
	GatewayEntityStatus `json:",inline"`
}

// KongVault is a Kong vault configured in Konnect. It is cluster-scoped, as in Kong's operator.
// +kubebuilder:validation:XValidation:rule="self.spec.prefix == oldSelf.spec.prefix",message="The spec.prefix field is immutable"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.spec.controlPlaneRef) || has(self.spec.controlPlaneRef)",message="controlPlaneRef is required once set"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.conditions) || !oldSelf.status.conditions.exists(c, c.type == 'Programmed' && c.status == 'True') || !has(self.spec.controlPlaneRef) || self.spec.controlPlaneRef == oldSelf.spec.controlPlaneRef",message="spec.controlPlaneRef is immutable when an entity is already Programmed"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=kv,categories=kong
// +kubebuilder:printcolumn:name="Backend Type",type=string,JSONPath=`.spec.backend`
// +kubebuilder:printcolumn:name="Prefix",type=string,JSONPath=`.spec.prefix`
// +kubebuilder:printcolumn:name="Programmed",type=string,JSONPath=`.status.conditions[?(@.type=="Programmed")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KongVault struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KongVaultSpec   `json:"spec"`
	Status KongVaultStatus `json:"status,omitempty"`
}

// KongVaultList is a list of KongVaults.
// +kubebuilder:object:root=true
type KongVaultList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KongVault `json:"items"`
}
