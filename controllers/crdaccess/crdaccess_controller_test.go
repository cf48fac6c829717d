package crdaccess

import (
	"encoding/json"
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// version is an OperatorVersion shipping objects, with spec.bundle as ALM records it (the digest is not checked here).
func version(objects ...map[string]any) operatorsv1alpha1.OperatorVersion {
	var ov operatorsv1alpha1.OperatorVersion
	ov.Spec.Bundle = &operatorsv1alpha1.BundleReference{Digest: "sha256:0000000000000000000000000000000000000000000000000000000000000000"}
	for _, o := range objects {
		data, err := json.Marshal(o)
		if err != nil {
			panic(err)
		}
		ov.Spec.Objects = append(ov.Spec.Objects, runtime.RawExtension{Raw: data})
	}
	return ov
}

func unrecorded(objects ...map[string]any) operatorsv1alpha1.OperatorVersion {
	ov := version(objects...)
	ov.Spec.Bundle = nil
	return ov
}

func crd(group, plural string) map[string]any {
	return map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": plural + "." + group},
		"spec":     map[string]any{"group": group, "names": map[string]any{"plural": plural}}}
}

func TestRules(t *testing.T) {
	got := Rules([]operatorsv1alpha1.OperatorVersion{
		version(crd("b.example.com", "widgets"), crd("a.example.com", "gadgets"),
			map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x"}}),
		// Another version of the same package ships the same CRD, and one more.
		version(crd("b.example.com", "widgets"), crd("b.example.com", "bolts")),
		// A CRD in a group Kubernetes serves is refused by the installer and must not widen ALM's access.
		version(crd("rbac.authorization.k8s.io", "roles"), crd("", "secrets")),
		// A version without spec.bundle (written by hand) is never installed and must not widen ALM's access.
		unrecorded(crd("d.example.com", "spies")),
	}, []apiextensionsv1.CustomResourceDefinition{{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		// A CRD the requirements loop created for a version that does not exist yet.
		Group: "c.example.com", Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "nuts"},
	}}})
	want := []rbacv1.PolicyRule{
		{APIGroups: []string{"a.example.com"}, Resources: []string{"gadgets"}, Verbs: []string{"list"}},
		{APIGroups: []string{"b.example.com"}, Resources: []string{"bolts", "widgets"}, Verbs: []string{"list"}},
		{APIGroups: []string{"c.example.com"}, Resources: []string{"nuts"}, Verbs: []string{"list"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Rules = %+v\nwant %+v", got, want)
	}
	if got := Rules(nil, nil); len(got) != 0 {
		t.Errorf("Rules(nil, nil) = %v, want none", got)
	}
}
