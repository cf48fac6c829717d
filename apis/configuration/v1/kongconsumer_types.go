package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
)

// KongConsumerSpec holds what Kong's consumer API has no top-level field for.
type KongConsumerSpec struct {
	// controlPlaneRef is the control plane the consumer lives in (type konnectNamespacedRef). A consumer without
	// one, or with type kic, is Kong Ingress Controller configuration: this operator leaves it alone.
	// +optional
	ControlPlaneRef *configurationv1alpha1.ControlPlaneRef `json:"controlPlaneRef,omitempty"`
	// adopt takes an entity that already exists in Konnect over instead of creating one (Kong's spec.adopt). It
	// cannot change.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.adopt is immutable"
	Adopt *configurationv1alpha1.AdoptOptions `json:"adopt,omitempty"`
	// tags of the consumer in Kong; the operator adds its own k8s-* tags.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:XValidation:rule="self.all(tag, size(tag) >= 1 && size(tag) <= 128)",message="tags entries must not be longer than 128 characters"
	Tags []string `json:"tags,omitempty"`
}

// KongConsumerStatus is the consumer's state in Konnect.
type KongConsumerStatus struct {
	// konnect is the Konnect entity the consumer is synchronised with.
	// +optional
	Konnect                    *configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef `json:"konnect,omitempty"`
	konnectv1alpha1.SyncStatus `json:",inline"`

	// conditions: Programmed, ControlPlaneRefValid, APIAuthRefValid.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// KongConsumer is a Kong consumer configured in Konnect.
// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(self.spec.controlPlaneRef) || !has(oldSelf.spec) || !has(oldSelf.spec.controlPlaneRef) || !has(oldSelf.status) || !has(oldSelf.status.conditions) || !oldSelf.status.conditions.exists(c, c.type == 'Programmed' && c.status == 'True') || self.spec.controlPlaneRef == oldSelf.spec.controlPlaneRef",message="spec.controlPlaneRef is immutable when an entity is already Programmed"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.spec) || !has(oldSelf.spec.controlPlaneRef) || (has(self.spec) && has(self.spec.controlPlaneRef))",message="controlPlaneRef is required once set"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=kc
// +kubebuilder:printcolumn:name="Username",type=string,JSONPath=`.username`
// +kubebuilder:printcolumn:name="Programmed",type=string,JSONPath=`.status.conditions[?(@.type=="Programmed")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.konnect.id`
// +kubebuilder:printcolumn:name="OrgID",type=string,JSONPath=`.status.konnect.organizationID`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="has(self.username) || has(self.custom_id)",message="set username or custom_id"
type KongConsumer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// username of the consumer; unique in its control plane.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Username string `json:"username,omitempty"`
	// custom_id is an ID of the consumer in another system; unique in its control plane.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	CustomID string `json:"custom_id,omitempty"`
	// credentials names Secrets holding the consumer's credentials. Accepted for compatibility with Kong's
	// manifests; this operator does not synchronise credentials yet.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	Credentials []string `json:"credentials,omitempty"`
	// consumerGroups names KongConsumerGroups the consumer belongs to. Accepted for compatibility with Kong's
	// manifests; this operator does not synchronise consumer groups yet.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	ConsumerGroups []string `json:"consumerGroups,omitempty"`

	Spec   KongConsumerSpec   `json:"spec,omitempty"`
	Status KongConsumerStatus `json:"status,omitempty"`
}

// KongConsumerList is a list of KongConsumers.
// +kubebuilder:object:root=true
type KongConsumerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KongConsumer `json:"items"`
}

// GetAdoptOptions returns spec.adopt (the entity reconciler adopts through it).
func (o *KongConsumer) GetAdoptOptions() *configurationv1alpha1.AdoptOptions { return o.Spec.Adopt }
