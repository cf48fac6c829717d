package slim

import (
	"fmt"
	"reflect"
	"testing"
	"unsafe"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// ovWithContent is an OperatorVersion of package p 1.0.0 in namespace ns whose bundle ships image as its
// Deployment's image, as a watch decodes it: with its own copy of everything.
func ovWithContent(t *testing.T, ns, image string) *operatorsv1alpha1.OperatorVersion {
	t.Helper()
	return decode(t, fmt.Sprintf(`{"metadata": {"name": "p.v1.0.0", "namespace": %q},
 "spec": {"packageName": "p-content", "version": "1.0.0", "bundle": {"digest": "sha256:0123"},
  "install": {"strategy": "deployment", "spec": {"deployments": [{"name": "p", "spec": {"selector": {"matchLabels": {"app": "p"}},
   "template": {"metadata": {"labels": {"app": "p"}}, "spec": {"containers": [{"name": "manager", "image": %q}]}}}}],
   "permissions": [{"serviceAccountName": "p", "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]}]}},
  "customresourcedefinitions": {"owned": [{"name": "ps.example.com", "version": "v1", "kind": "P"}]},
  "objects": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "p-config"}}]}}`, ns, image))
}

func deployments(ov *operatorsv1alpha1.OperatorVersion) unsafe.Pointer {
	return unsafe.Pointer(unsafe.SliceData(ov.Spec.Install.StrategySpec.DeploymentSpecs))
}

// The OperatorVersions of one bundle in many namespaces hold one copy of its install strategy and manifests; one
// whose content differs keeps its own, unchanged.
func TestTransformSharesBundleContent(t *testing.T) {
	a, b := ovWithContent(t, "team-a", "example.com/p:1"), ovWithContent(t, "team-b", "example.com/p:1")
	edited := ovWithContent(t, "team-c", "example.com/p:edited")
	want := edited.DeepCopy()
	for _, ov := range []*operatorsv1alpha1.OperatorVersion{a, b, edited} {
		if _, err := Transform()(ov); err != nil {
			t.Fatal(err)
		}
	}
	if deployments(a) != deployments(b) || unsafe.SliceData(a.Spec.Objects) != unsafe.SliceData(b.Spec.Objects) ||
		unsafe.SliceData(a.Spec.CustomResourceDefinitions.Owned) != unsafe.SliceData(b.Spec.CustomResourceDefinitions.Owned) {
		t.Errorf("two OperatorVersions of one bundle hold two copies of its content, want one")
	}
	if deployments(edited) == deployments(a) || !reflect.DeepEqual(edited.Spec, want.Spec) {
		t.Errorf("an OperatorVersion whose content differs got the shared content: image %s, want %s", image(edited), image(want))
	}
}

func image(ov *operatorsv1alpha1.OperatorVersion) string {
	return ov.Spec.Install.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec.Containers[0].Image
}
