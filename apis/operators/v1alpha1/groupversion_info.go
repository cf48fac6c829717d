// Package v1alpha1 contains the ALM API: AppType (what a user wants installed), OperatorVersion (one version of one
// operator installed in a namespace) and CatalogSource (where bundles come from).
//
// It depends on apimachinery only, so the pure catalog library can use it without controller-runtime.
//
// +kubebuilder:object:generate=true
// +groupName=operators.alm.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of the ALM API.
	GroupVersion = schema.GroupVersion{Group: "operators.alm.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the ALM types with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the ALM types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&AppType{}, &AppTypeList{},
		&OperatorVersion{}, &OperatorVersionList{},
		&CatalogSource{}, &CatalogSourceList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
