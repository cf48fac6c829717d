package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The credential kinds, as Kong's operator declares them: one kind per credential type, each naming its KongConsumer
// (spec.consumerRef, in the credential's namespace) and holding the credential's fields as Konnect's API spells them.
// Each becomes a credential of the consumer's entity in Konnect once the consumer is Programmed. They sit beside the
// consumer's Secret-labelled credentials (KongConsumer credentials), which work as before.

// KonnectEntityStatusWithControlPlaneAndConsumerRefs is the Konnect status of a credential.
type KonnectEntityStatusWithControlPlaneAndConsumerRefs struct {
	KonnectEntityStatusWithControlPlaneRef `json:",inline"`
	// consumerID is the Konnect ID of the consumer the credential belongs to.
	// +optional
	ConsumerID string `json:"consumerID,omitempty"`
}

// KongCredentialStatus is the state of a credential in Konnect.
type KongCredentialStatus struct {
	// konnect is the Konnect entity the credential is synchronised with.
	// +optional
	Konnect             *KonnectEntityStatusWithControlPlaneAndConsumerRefs `json:"konnect,omitempty"`
	GatewayEntityStatus `json:",inline"`
}

// KongCredentialRefs are what every credential kind's spec has besides its fields.
type KongCredentialRefs struct {
	// consumerRef names the KongConsumer (in this namespace) the credential belongs to; the credential lives in the
	// consumer's control plane.
	// +required
	ConsumerRef corev1.LocalObjectReference `json:"consumerRef"`
	// adopt takes a credential that already exists in Konnect (of the consumer) over instead of creating one
	// (Kong's spec.adopt). It cannot change.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.adopt is immutable"
	Adopt *AdoptOptions `json:"adopt,omitempty"`
	// tags of the credential in Kong; the operator adds its own k8s-* tags.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	Tags []string `json:"tags,omitempty"`
}

// KongCredentialAPIKeySpec is a key-auth credential.
type KongCredentialAPIKeySpec struct {
	KongCredentialRefs `json:",inline"`
	// key is the API key.
	// +required
	// +kubebuilder:validation:MinLength=1
	Key string `json:"key"`
}

// KongCredentialAPIKey is an API key (key-auth) credential of a KongConsumer.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.conditions) || !oldSelf.status.conditions.exists(c, c.type == 'Programmed' && c.status == 'True') || oldSelf.spec.consumerRef == self.spec.consumerRef",message="spec.consumerRef is immutable when an entity is already Programmed"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=kong
// +kubebuilder:printcolumn:name="Programmed",type=string,JSONPath=`.status.conditions[?(@.type=="Programmed")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.konnect.id`
type KongCredentialAPIKey struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KongCredentialAPIKeySpec `json:"spec"`
	Status KongCredentialStatus     `json:"status,omitempty"`
}

// KongCredentialAPIKeyList is a list of KongCredentialAPIKeys.
// +kubebuilder:object:root=true
type KongCredentialAPIKeyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KongCredentialAPIKey `json:"items"`
}

// KongCredentialBasicAuthSpec is a basic-auth credential.
type KongCredentialBasicAuthSpec struct {
	KongCredentialRefs `json:",inline"`
	// username of the credential.
	// +required
	// +kubebuilder:validation:MinLength=1
	Username string `json:"username"`
	// password of the credential. Konnect stores it hashed, so a change made in Konnect is not seen.
	// +required
	// +kubebuilder:validation:MinLength=1
	Password string `json:"password"`
}

// KongCredentialBasicAuth is a basic-auth credential of a KongConsumer.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.conditions) || !oldSelf.status.conditions.exists(c, c.type == 'Programmed' && c.status == 'True') || oldSelf.spec.consumerRef == self.spec.consumerRef",message="spec.consumerRef is immutable when an entity is already Programmed"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=kong
// +kubebuilder:printcolumn:name="Programmed",type=string,JSONPath=`.status.conditions[?(@.type=="Programmed")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.konnect.id`
type KongCredentialBasicAuth struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KongCredentialBasicAuthSpec `json:"spec"`
	Status KongCredentialStatus        `json:"status,omitempty"`
}

// KongCredentialBasicAuthList is a list of KongCredentialBasicAuths.
// +kubebuilder:object:root=true
type KongCredentialBasicAuthList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KongCredentialBasicAuth `json:"items"`
}

// KongCredentialACLSpec is an ACL group membership of a consumer.
type KongCredentialACLSpec struct {
	KongCredentialRefs `json:",inline"`
	// group is the ACL group.
	// +required
	// +kubebuilder:validation:MinLength=1
	Group string `json:"group"`
}

// KongCredentialACL is an ACL credential (group) of a KongConsumer.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.conditions) || !oldSelf.status.conditions.exists(c, c.type == 'Programmed' && c.status == 'True') || oldSelf.spec.consumerRef == self.spec.consumerRef",message="spec.consumerRef is immutable when an entity is already Programmed"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=kong
// +kubebuilder:printcolumn:name="Programmed",type=string,JSONPath=`.status.conditions[?(@.type=="Programmed")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.konnect.id`
type KongCredentialACL struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KongCredentialACLSpec `json:"spec"`
	Status KongCredentialStatus  `json:"status,omitempty"`
}

// KongCredentialACLList is a list of KongCredentialACLs.
// +kubebuilder:object:root=true
type KongCredentialACLList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KongCredentialACL `json:"items"`
}

// KongCredentialJWTSpec is a JWT credential.
type KongCredentialJWTSpec struct {
	KongCredentialRefs `json:",inline"`
	// algorithm signs the tokens; default HS256.
	// +optional
	// +kubebuilder:default=HS256
	// +kubebuilder:validation:Enum=HS256;HS384;HS512;RS256;RS384;RS512;ES256;ES384;ES512;PS256;PS384;PS512;EdDSA
	Algorithm string `json:"algorithm,omitempty"`
	// key identifies the credential (the token's iss claim); Konnect generates one when unset.
	// +optional
	Key *string `json:"key,omitempty"`
	// rsa_public_key verifies the tokens of an RS*, ES*, PS* or EdDSA algorithm, in PEM format.
	// +optional
	RSAPublicKey *string `json:"rsa_public_key,omitempty"`
	// secret signs the tokens of an HS* algorithm; Konnect generates one when unset.
	// +optional
	Secret *string `json:"secret,omitempty"`
}

// KongCredentialJWT is a JWT credential of a KongConsumer.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.conditions) || !oldSelf.status.conditions.exists(c, c.type == 'Programmed' && c.status == 'True') || oldSelf.spec.consumerRef == self.spec.consumerRef",message="spec.consumerRef is immutable when an entity is already Programmed"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.algorithm) || !(self.spec.algorithm in ['RS256','RS384','RS512','ES256','ES384','ES512','PS256','PS384','PS512','EdDSA']) || has(self.spec.rsa_public_key)",message="spec.rsa_public_key is required when algorithm is RS*, ES*, PS* or EdDSA*"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=kong
// +kubebuilder:printcolumn:name="Programmed",type=string,JSONPath=`.status.conditions[?(@.type=="Programmed")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.konnect.id`
type KongCredentialJWT struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KongCredentialJWTSpec `json:"spec"`
	Status KongCredentialStatus  `json:"status,omitempty"`
}

// KongCredentialJWTList is a list of KongCredentialJWTs.
// +kubebuilder:object:root=true
type KongCredentialJWTList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KongCredentialJWT `json:"items"`
}

// KongCredentialHMACSpec is an hmac-auth credential.
type KongCredentialHMACSpec struct {
	KongCredentialRefs `json:",inline"`
	// username of the credential.
	// +required
	// +kubebuilder:validation:MinLength=1
	Username string `json:"username"`
	// secret signs the requests; Konnect generates one when unset.
	// +optional
	Secret *string `json:"secret,omitempty"`
}

// KongCredentialHMAC is an HMAC (hmac-auth) credential of a KongConsumer.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.conditions) || !oldSelf.status.conditions.exists(c, c.type == 'Programmed' && c.status == 'True') || oldSelf.spec.consumerRef == self.spec.consumerRef",message="spec.consumerRef is immutable when an entity is already Programmed"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=kong
// +kubebuilder:printcolumn:name="Programmed",type=string,JSONPath=`.status.conditions[?(@.type=="Programmed")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.konnect.id`
type KongCredentialHMAC struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KongCredentialHMACSpec `json:"spec"`
	Status KongCredentialStatus   `json:"status,omitempty"`
}

// KongCredentialHMACList is a list of KongCredentialHMACs.
// +kubebuilder:object:root=true
type KongCredentialHMACList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KongCredentialHMAC `json:"items"`
}

// GetAdoptOptions returns spec.adopt.
func (o *KongCredentialAPIKey) GetAdoptOptions() *AdoptOptions { return o.Spec.Adopt }

// GetAdoptOptions returns spec.adopt.
func (o *KongCredentialBasicAuth) GetAdoptOptions() *AdoptOptions { return o.Spec.Adopt }

// GetAdoptOptions returns spec.adopt.
func (o *KongCredentialACL) GetAdoptOptions() *AdoptOptions { return o.Spec.Adopt }

// GetAdoptOptions returns spec.adopt.
func (o *KongCredentialJWT) GetAdoptOptions() *AdoptOptions { return o.Spec.Adopt }

// GetAdoptOptions returns spec.adopt.
func (o *KongCredentialHMAC) GetAdoptOptions() *AdoptOptions { return o.Spec.Adopt }
