// Package v1alpha1 contains the konnect.konghq.com v1alpha1 API of the Konnect operator: KonnectAPIAuthConfiguration
// (how to reach and authenticate to a Konnect organization), plus the condition types and reasons shared by every
// Konnect kind. Field names and JSON follow Kong Gateway Operator's API so existing manifests apply unchanged.
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
		&KonnectAPIAuthConfiguration{}, &KonnectAPIAuthConfigurationList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
