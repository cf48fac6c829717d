package bundle

import (
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
)

// crdScheme knows the internal apiextensions types and both versions, with their conversions and defaults.
var crdScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	apiextinstall.Install(s)
	return s
}()

// convertCRDToV1 converts an apiextensions.k8s.io/v1beta1 CRD to v1 the way the API server does (defaults, then
// v1beta1 -> internal -> v1), then makes the result valid v1 with normalizeCRD.
func convertCRDToV1(in *apiextv1beta1.CustomResourceDefinition) (*apiextv1.CustomResourceDefinition, error) {
	src := in.DeepCopy()
	crdScheme.Default(src)
	internal := &apiextensions.CustomResourceDefinition{}
	if err := crdScheme.Convert(src, internal, nil); err != nil {
		return nil, fmt.Errorf("v1beta1 to internal: %w", err)
	}
	out := &apiextv1.CustomResourceDefinition{}
	if err := crdScheme.Convert(internal, out, nil); err != nil {
		return nil, fmt.Errorf("internal to v1: %w", err)
	}
	out.Status = apiextv1.CustomResourceDefinitionStatus{} // a manifest, not a stored object
	out.APIVersion = apiextv1.SchemeGroupVersion.String()
	out.Kind = "CustomResourceDefinition"
	normalizeCRD(out)
	return out, nil
}

// normalizeCRD makes a v1 CRD acceptable to a current API server without changing what it accepts:
// spec.preserveUnknownFields=true becomes x-kubernetes-preserve-unknown-fields on every version's schema root, and
// a version without a schema gets an open object schema. It reports whether it changed anything.
func normalizeCRD(crd *apiextv1.CustomResourceDefinition) bool {
	changed := false
	preserve := crd.Spec.PreserveUnknownFields
	if preserve {
		crd.Spec.PreserveUnknownFields = false
		changed = true
	}
	yes := true
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			v.Schema = &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{
				Type: "object", XPreserveUnknownFields: &yes,
			}}
			changed = true
			continue
		}
		root := v.Schema.OpenAPIV3Schema
		if root.Type == "" {
			root.Type = "object"
			changed = true
		}
		if preserve && (root.XPreserveUnknownFields == nil || !*root.XPreserveUnknownFields) {
			root.XPreserveUnknownFields = &yes
			changed = true
		}
	}
	return changed
}
