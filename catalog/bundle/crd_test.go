package bundle

import (
	"testing"

	apiextv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestConvertCRD(t *testing.T) {
	yes := true
	tests := []struct {
		name string
		in   apiextv1beta1.CustomResourceDefinition
	}{
		{name: "no schema, preserveUnknownFields defaulted", in: apiextv1beta1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "things.example.com"},
			Spec: apiextv1beta1.CustomResourceDefinitionSpec{Group: "example.com", Version: "v1",
				Names: apiextv1beta1.CustomResourceDefinitionNames{Kind: "Thing", Plural: "things"}}}},
		{name: "top-level schema and preserveUnknownFields", in: apiextv1beta1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "things.example.com"},
			Spec: apiextv1beta1.CustomResourceDefinitionSpec{Group: "example.com", PreserveUnknownFields: &yes,
				Versions: []apiextv1beta1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true}, {Name: "v2", Served: true}},
				Names:    apiextv1beta1.CustomResourceDefinitionNames{Kind: "Thing", Plural: "things"},
				Validation: &apiextv1beta1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1beta1.JSONSchemaProps{
					Properties: map[string]apiextv1beta1.JSONSchemaProps{"spec": {Type: "object"}}}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := convertCRDToV1(&tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if out.APIVersion != "apiextensions.k8s.io/v1" || out.Spec.PreserveUnknownFields || len(out.Spec.Versions) == 0 {
				t.Fatalf("not v1: %+v", out)
			}
			for _, v := range out.Spec.Versions {
				s := v.Schema.OpenAPIV3Schema
				if s.Type != "object" || s.XPreserveUnknownFields == nil || !*s.XPreserveUnknownFields {
					t.Errorf("version %s schema root %+v", v.Name, s)
				}
			}
			if out.Spec.Names.ListKind != "ThingList" || out.Spec.Scope != "Namespaced" {
				t.Errorf("defaults not applied: %+v", out.Spec.Names)
			}
		})
	}
}
