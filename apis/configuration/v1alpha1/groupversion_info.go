// Package v1alpha1 contains the configuration.konghq.com v1alpha1 API of the Konnect operator: KongService,
// KongRoute and KongPluginBinding, plus the control plane reference and Konnect status shared by gateway-configuring
// kinds. Field names and JSON follow Kong Gateway Operator's API so existing manifests apply unchanged.
//
// +kubebuilder:object:generate=true
// +groupName=configuration.konghq.com
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is configuration.konghq.com/v1alpha1.
	GroupVersion = schema.GroupVersion{Group: "configuration.konghq.com", Version: "v1alpha1"}

	// SchemeBuilder registers the types of this package with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&KongService{}, &KongServiceList{},
		&KongRoute{}, &KongRouteList{},
		&KongPluginBinding{}, &KongPluginBindingList{},
		&KongUpstream{}, &KongUpstreamList{}, &KongTarget{}, &KongTargetList{},
		&KongCertificate{}, &KongCertificateList{}, &KongCACertificate{}, &KongCACertificateList{},
		&KongSNI{}, &KongSNIList{}, &KongDataPlaneClientCertificate{}, &KongDataPlaneClientCertificateList{},
		&KongKey{}, &KongKeyList{}, &KongKeySet{}, &KongKeySetList{},
		&KongVault{}, &KongVaultList{},
		&KongReferenceGrant{}, &KongReferenceGrantList{},
		&KongCredentialAPIKey{}, &KongCredentialAPIKeyList{}, &KongCredentialBasicAuth{}, &KongCredentialBasicAuthList{},
		&KongCredentialACL{}, &KongCredentialACLList{}, &KongCredentialJWT{}, &KongCredentialJWTList{},
		&KongCredentialHMAC{}, &KongCredentialHMACList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
