// Package v1beta1 contains the configuration.konghq.com v1beta1 API of the Konnect operator: KongConsumerGroup.
// Field names and JSON follow Kong's API so existing manifests apply unchanged.
//
// +kubebuilder:object:generate=true
// +groupName=configuration.konghq.com
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is configuration.konghq.com/v1beta1.
	GroupVersion = schema.GroupVersion{Group: "configuration.konghq.com", Version: "v1beta1"}

	// SchemeBuilder registers the types of this package with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &KongConsumerGroup{}, &KongConsumerGroupList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
