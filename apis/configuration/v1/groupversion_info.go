// Package v1 contains the configuration.konghq.com v1 API of the Konnect operator: KongConsumer and KongPlugin. Field names and
// JSON follow Kong's API (username and custom_id at the top level) so existing manifests apply unchanged.
//
// +kubebuilder:object:generate=true
// +groupName=configuration.konghq.com
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is configuration.konghq.com/v1.
	GroupVersion = schema.GroupVersion{Group: "configuration.konghq.com", Version: "v1"}

	// SchemeBuilder registers the types of this package with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &KongConsumer{}, &KongConsumerList{}, &KongPlugin{}, &KongPluginList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
