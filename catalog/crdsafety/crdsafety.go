// Package crdsafety decides whether a CRD update keeps the objects already stored readable and valid, before the
// installer applies it.
package crdsafety

import (
	"fmt"
	"strings"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// UpdateSafe says whether replacing the existing CRD with the desired one keeps every stored object readable
// and valid: no version still in status.storedVersions may disappear, and every existing object must validate
// against the new schema of its version. The error names the CRD and the problem.
func UpdateSafe(existing, desired *apiextensionsv1.CustomResourceDefinition, objects []unstructured.Unstructured) error {
	versions := map[string]*apiextensionsv1.CustomResourceDefinitionVersion{}
	for i := range desired.Spec.Versions {
		versions[desired.Spec.Versions[i].Name] = &desired.Spec.Versions[i]
	}
	for _, stored := range existing.Status.StoredVersions {
		if _, ok := versions[stored]; !ok {
			return fmt.Errorf("CRD %s: the update removes version %s, which is still in status.storedVersions: objects stored as %s would become unreadable; keep the version (served: false) until they are migrated", desired.Name, stored, stored)
		}
	}
	var problems []string
	for i := range objects {
		obj := &objects[i]
		gv := obj.GetAPIVersion()
		version := gv[strings.LastIndex(gv, "/")+1:]
		v, ok := versions[version]
		if !ok || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		internal := &apiextensionsinternal.JSONSchemaProps{}
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
			return fmt.Errorf("CRD %s: version %s: converting the schema: %w", desired.Name, version, err)
		}
		validator, _, err := validation.NewSchemaValidator(internal)
		if err != nil {
			return fmt.Errorf("CRD %s: version %s: the schema is invalid: %w", desired.Name, version, err)
		}
		errs := validation.ValidateCustomResource(nil, obj.UnstructuredContent(), validator)
		if len(errs) > 0 {
			name := obj.GetName()
			if obj.GetNamespace() != "" {
				name = obj.GetNamespace() + "/" + name
			}
			problems = append(problems, fmt.Sprintf("%s %s: %s", obj.GetKind(), name, errs.ToAggregate().Error()))
		}
		if len(problems) >= 3 {
			break
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("CRD %s: existing objects do not validate against the new schema: %s", desired.Name, strings.Join(problems, "; "))
	}
	return nil
}
