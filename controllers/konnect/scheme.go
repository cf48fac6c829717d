package konnect

import (
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	configurationv1beta1 "github.com/almproject/alm/apis/configuration/v1beta1"
	cloudv1alpha1 "github.com/almproject/alm/apis/konnect/cloudgateway/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
)

// NewScheme returns a scheme with the built-in kinds and every kind of the Konnect operator.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		konnectv1alpha1.AddToScheme,
		cloudv1alpha1.AddToScheme,
		konnectv1alpha2.AddToScheme,
		configurationv1alpha1.AddToScheme,
		configurationv1.AddToScheme,
		configurationv1beta1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}
