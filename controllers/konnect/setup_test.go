package konnect

import (
	"testing"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	configurationv1beta1 "github.com/almproject/alm/apis/configuration/v1beta1"
)

// The kinds added after the first bundles are synced only where their CRDs are installed: an image built from this
// code runs under an older bundle's CRDs too.
func TestOptionalKindsFollowTheInstalledCRDs(t *testing.T) {
	group := configurationv1beta1.GroupVersion.WithKind("KongConsumerGroup")
	plugin := configurationv1.GroupVersion.WithKind("KongPlugin")
	binding := configurationv1alpha1.GroupVersion.WithKind("KongPluginBinding")
	for _, tc := range []struct {
		name  string
		kinds []schema.GroupVersionKind
		want  installedKinds
	}{
		{"a 1.0.0 bundle's CRDs", nil, installedKinds{}},
		{"consumer groups only", []schema.GroupVersionKind{group}, installedKinds{consumerGroups: true}},
		{"plugins without consumer groups", []schema.GroupVersionKind{plugin, binding}, installedKinds{}},
		{"every kind", []schema.GroupVersionKind{group, plugin, binding}, installedKinds{consumerGroups: true, plugins: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mapper := apimeta.NewDefaultRESTMapper(nil)
			mapper.Add(configurationv1.GroupVersion.WithKind("KongConsumer"), apimeta.RESTScopeNamespace)
			for _, k := range tc.kinds {
				mapper.Add(k, apimeta.RESTScopeNamespace)
			}
			got, err := optionalKinds(mapper)
			if err != nil || got != tc.want {
				t.Errorf("optionalKinds = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
