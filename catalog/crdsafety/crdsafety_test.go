package crdsafety

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func crd(storedVersions []string, versions ...apiextensionsv1.CustomResourceDefinitionVersion) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec:       apiextensionsv1.CustomResourceDefinitionSpec{Group: "example.com", Versions: versions},
		Status:     apiextensionsv1.CustomResourceDefinitionStatus{StoredVersions: storedVersions},
	}
}

func version(name string, required ...string) apiextensionsv1.CustomResourceDefinitionVersion {
	return apiextensionsv1.CustomResourceDefinitionVersion{Name: name, Served: true, Storage: true, Schema: &apiextensionsv1.CustomResourceValidation{
		OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {Type: "object", Required: required, Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"size":  {Type: "string"},
				"color": {Type: "string"},
			}},
		}},
	}}
}

func widget(version string, spec map[string]any) unstructured.Unstructured {
	return unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/" + version, "kind": "Widget",
		"metadata": map[string]any{"name": "w1", "namespace": "ns"}, "spec": spec,
	}}
}

func TestUpdateSafe(t *testing.T) {
	cases := []struct {
		name     string
		existing *apiextensionsv1.CustomResourceDefinition
		desired  *apiextensionsv1.CustomResourceDefinition
		objects  []unstructured.Unstructured
		wantErr  string
	}{
		{name: "same CRD", existing: crd([]string{"v1"}, version("v1")), desired: crd(nil, version("v1")),
			objects: []unstructured.Unstructured{widget("v1", map[string]any{"size": "L"})}},
		{name: "adds a version", existing: crd([]string{"v1"}, version("v1")), desired: crd(nil, version("v1"), version("v2"))},
		{name: "drops a stored version", existing: crd([]string{"v1alpha1", "v1"}, version("v1alpha1"), version("v1")), desired: crd(nil, version("v1")),
			wantErr: "CRD widgets.example.com: the update removes version v1alpha1, which is still in status.storedVersions"},
		{name: "drops a version never stored", existing: crd([]string{"v1"}, version("v1alpha1"), version("v1")), desired: crd(nil, version("v1"))},
		{name: "new required field existing objects lack", existing: crd([]string{"v1"}, version("v1")), desired: crd(nil, version("v1", "color")),
			objects: []unstructured.Unstructured{widget("v1", map[string]any{"size": "L"})},
			wantErr: "CRD widgets.example.com: existing objects do not validate against the new schema: Widget ns/w1: spec.color: Required value"},
		{name: "new required field existing objects have", existing: crd([]string{"v1"}, version("v1")), desired: crd(nil, version("v1", "color")),
			objects: []unstructured.Unstructured{widget("v1", map[string]any{"color": "red"})}},
		{name: "type change breaks objects", existing: crd([]string{"v1"}, version("v1")),
			desired: crd(nil, apiextensionsv1.CustomResourceDefinitionVersion{Name: "v1", Served: true, Storage: true, Schema: &apiextensionsv1.CustomResourceValidation{
				OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"size": {Type: "integer"}}}}}}}),
			objects: []unstructured.Unstructured{widget("v1", map[string]any{"size": "L"})},
			wantErr: "Widget ns/w1: spec.size: Invalid value"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := UpdateSafe(tc.existing, tc.desired, tc.objects)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected refusal: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}
