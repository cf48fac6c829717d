package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KonnectAPIAuthType says where a KonnectAPIAuthConfiguration's token is.
// +kubebuilder:validation:Enum=token;secretRef
type KonnectAPIAuthType string

const (
	// KonnectAPIAuthTypeToken: the token is in spec.token.
	KonnectAPIAuthTypeToken KonnectAPIAuthType = "token"
	// KonnectAPIAuthTypeSecretRef: the token is under the key "token" of the Secret spec.secretRef.
	KonnectAPIAuthTypeSecretRef KonnectAPIAuthType = "secretRef"
)

// SecretTokenKey is the key of the token in a Secret referenced by spec.secretRef.
const SecretTokenKey = "token"

// KonnectAPIAuthConfigurationSpec says how to reach and authenticate to a Konnect organization.
// +kubebuilder:validation:XValidation:rule="self.type != 'token' || (has(self.token) && !has(self.secretRef))",message="type token requires spec.token and no spec.secretRef"
// +kubebuilder:validation:XValidation:rule="self.type != 'secretRef' || (has(self.secretRef) && !has(self.token))",message="type secretRef requires spec.secretRef and no spec.token"
// +kubebuilder:validation:XValidation:rule="!has(self.token) || self.token.startsWith('spat_') || self.token.startsWith('kpat_')",message="a Konnect token starts with spat_ or kpat_",fieldPath=".token"
// +kubebuilder:validation:XValidation:rule="!has(self.token) || self.token.matches('^[!-~]+$')",message="a Konnect token is printable ASCII without spaces, line breaks or control characters (it is sent in an HTTP header)",fieldPath=".token"
type KonnectAPIAuthConfigurationSpec struct {
	// type is where the token is: "token" (in spec.token) or "secretRef" (in a Secret).
	// +required
	Type KonnectAPIAuthType `json:"type"`

	// token is a Konnect personal (kpat_) or system account (spat_) access token. Prefer secretRef: a token here is
	// readable by everyone who may read this object.
	// It is sent in an HTTP header, so it is printable ASCII without spaces (no line breaks, control characters or
	// header injection); these rules are checked on the spec so that the API server's error never quotes the token.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Token string `json:"token,omitempty"`

	// secretRef names a Secret whose key "token" holds the token. The Secret must be in this object's namespace
	// (namespace empty or equal to it): a cross-namespace Secret is refused, so that nobody can use a token they
	// cannot read.
	// +optional
	SecretRef *corev1.SecretReference `json:"secretRef,omitempty"`

	// serverURL is the Konnect API: a region host such as "eu.api.konghq.com" (https is assumed), a full https URL,
	// or an http:// URL (a local simulator): [http[s]://]host[:port][/path], without user info, query or fragment.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="serverURL is immutable"
	// +kubebuilder:validation:XValidation:rule="!self.contains('://') || self.startsWith('https://') || self.startsWith('http://')",message="serverURL must use https or http (or be a bare host name such as eu.api.konghq.com)"
	// +kubebuilder:validation:XValidation:rule="!self.contains('@')",message="serverURL must not hold user info (user:password@): put the token in spec.token or spec.secretRef"
	// +kubebuilder:validation:XValidation:rule="!self.contains('?') && !self.contains('#')",message="serverURL must not have a query or fragment"
	// +kubebuilder:validation:XValidation:rule="self.matches('^(https?://)?([[][0-9a-fA-F:.]+[]]|[A-Za-z0-9.-]+)(:[0-9]{1,5})?(/[!-~]*)?$')",message="serverURL must be [http[s]://]host[:port][/path] in printable ASCII"
	ServerURL string `json:"serverURL"`
}

// KonnectAPIAuthConfigurationStatus is what the operator observed about the token.
type KonnectAPIAuthConfigurationStatus struct {
	// organizationID is the Konnect organization the token belongs to.
	// +optional
	OrganizationID string `json:"organizationID,omitempty"`
	// serverURL is the normalised Konnect API URL used.
	// +optional
	ServerURL string `json:"serverURL,omitempty"`
	// conditions: APIAuthValid.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// KonnectAPIAuthConfiguration holds the credentials and server URL that Konnect objects use to reach Konnect.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=konnectauth
// +kubebuilder:printcolumn:name="Valid",type=string,JSONPath=`.status.conditions[?(@.type=="APIAuthValid")].status`
// +kubebuilder:printcolumn:name="OrgID",type=string,JSONPath=`.status.organizationID`
// +kubebuilder:printcolumn:name="ServerURL",type=string,JSONPath=`.status.serverURL`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KonnectAPIAuthConfiguration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KonnectAPIAuthConfigurationSpec   `json:"spec,omitempty"`
	Status KonnectAPIAuthConfigurationStatus `json:"status,omitempty"`
}

// KonnectAPIAuthConfigurationList is a list of KonnectAPIAuthConfigurations.
// +kubebuilder:object:root=true
type KonnectAPIAuthConfigurationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KonnectAPIAuthConfiguration `json:"items"`
}
