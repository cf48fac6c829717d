package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
)

// KongConsumerGroupSpec declares a consumer group in a Konnect control plane.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.controlPlaneRef) || has(self.controlPlaneRef)",message="controlPlaneRef is required once set"
type KongConsumerGroupSpec struct {
	// name of the consumer group in Kong; the object's name when empty. Unique in its control plane.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Name string `json:"name,omitempty"`
	// controlPlaneRef is the control plane the group lives in (type konnectNamespacedRef). A group without one, or
	// with type kic, is Kong Ingress Controller configuration: this operator leaves it alone.
	// +optional
	ControlPlaneRef *configurationv1alpha1.ControlPlaneRef `json:"controlPlaneRef,omitempty"`
	// adopt takes an entity that already exists in Konnect over instead of creating one (Kong's spec.adopt). It
	// cannot change.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.adopt is immutable"
	Adopt *configurationv1alpha1.AdoptOptions `json:"adopt,omitempty"`
	// tags of the group in Kong; the operator adds its own k8s-* tags.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:XValidation:rule="self.all(tag, size(tag) >= 1 && size(tag) <= 128)",message="tags entries must not be longer than 128 characters"
	Tags []string `json:"tags,omitempty"`
}

// KongConsumerGroupStatus is the group's state in Konnect.
type KongConsumerGroupStatus struct {
	// konnect is the Konnect entity the group is synchronised with.
	// +optional
	Konnect                    *configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef `json:"konnect,omitempty"`
	konnectv1alpha1.SyncStatus `json:",inline"`

	// conditions: Programmed, ControlPlaneRefValid, APIAuthRefValid.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// KongConsumerGroup is a Kong consumer group configured in Konnect. KongConsumers join it with consumerGroups.
// +kubebuilder:validation:XValidation:rule="!has(self.spec.controlPlaneRef) || !has(oldSelf.spec.controlPlaneRef) || !has(oldSelf.status) || !has(oldSelf.status.conditions) || !oldSelf.status.conditions.exists(c, c.type == 'Programmed' && c.status == 'True') || self.spec.controlPlaneRef == oldSelf.spec.controlPlaneRef",message="spec.controlPlaneRef is immutable when an entity is already Programmed"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=kcg
// +kubebuilder:printcolumn:name="Name",type=string,JSONPath=`.spec.name`,description="Name of the group in Kong"
// +kubebuilder:printcolumn:name="Programmed",type=string,JSONPath=`.status.conditions[?(@.type=="Programmed")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.konnect.id`
// +kubebuilder:printcolumn:name="OrgID",type=string,JSONPath=`.status.konnect.organizationID`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KongConsumerGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec   KongConsumerGroupSpec   `json:"spec,omitempty"`
	Status KongConsumerGroupStatus `json:"status,omitempty"`
}

// KongConsumerGroupList is a list of KongConsumerGroups.
// +kubebuilder:object:root=true
type KongConsumerGroupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KongConsumerGroup `json:"items"`
}

// GetAdoptOptions returns spec.adopt (the entity reconciler adopts through it).
func (o *KongConsumerGroup) GetAdoptOptions() *configurationv1alpha1.AdoptOptions {
	return o.Spec.Adopt
}
