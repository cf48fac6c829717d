package harness

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/configmap"
)

// WriteBundle writes d as an OLM registry+v1 bundle directory under root (root/<package>/<version>), as
// operator-sdk would lay it out, on channel "stable", and returns the directory.
func WriteBundle(t testing.TB, root string, d Demo) string {
	t.Helper()
	ov := d.OperatorVersion()
	dir := filepath.Join(root, ov.Spec.PackageName, d.Version)
	for _, sub := range []string{"manifests", "metadata"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	csv := &opv1alpha1.ClusterServiceVersion{
		TypeMeta:   metav1.TypeMeta{APIVersion: "operators.coreos.com/v1alpha1", Kind: "ClusterServiceVersion"},
		ObjectMeta: metav1.ObjectMeta{Name: ov.Name},
		Spec: opv1alpha1.ClusterServiceVersionSpec{
			DisplayName:               ov.Spec.PackageName,
			Description:               "A test operator.",
			Version:                   ov.Spec.Version,
			Replaces:                  ov.Spec.Replaces,
			Skips:                     ov.Spec.Skips,
			CustomResourceDefinitions: ov.Spec.CustomResourceDefinitions,
			InstallStrategy:           ov.Spec.Install,
			WebhookDefinitions:        ov.Spec.WebhookDefinitions,
			InstallModes: []opv1alpha1.InstallMode{
				{Type: opv1alpha1.InstallModeTypeOwnNamespace, Supported: true},
				{Type: opv1alpha1.InstallModeTypeSingleNamespace, Supported: true},
				{Type: opv1alpha1.InstallModeTypeMultiNamespace, Supported: false},
				{Type: opv1alpha1.InstallModeTypeAllNamespaces, Supported: true},
			},
		},
	}
	csv.Annotations = map[string]string{}
	if d.SkipRange != "" {
		csv.Annotations["olm.skipRange"] = d.SkipRange
	}
	if d.Handoff != "" {
		csv.Annotations["operators.alm.dev/handoff"] = d.Handoff
	}
	writeYAML(t, filepath.Join(dir, "manifests", ov.Spec.PackageName+".clusterserviceversion.yaml"), csv)
	for _, raw := range ov.Spec.Objects {
		var obj map[string]any
		if err := json.Unmarshal(raw.Raw, &obj); err != nil {
			t.Fatal(err)
		}
		meta, _ := obj["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		writeYAML(t, filepath.Join(dir, "manifests", strings.ToLower(obj["kind"].(string))+"-"+name+".yaml"), obj)
	}
	annotations := map[string]any{"annotations": map[string]string{
		"operators.operatorframework.io.bundle.mediatype.v1":       "registry+v1",
		"operators.operatorframework.io.bundle.manifests.v1":       "manifests/",
		"operators.operatorframework.io.bundle.metadata.v1":        "metadata/",
		"operators.operatorframework.io.bundle.package.v1":         ov.Spec.PackageName,
		"operators.operatorframework.io.bundle.channels.v1":        "stable",
		"operators.operatorframework.io.bundle.channel.default.v1": "stable",
	}}
	writeYAML(t, filepath.Join(dir, "metadata", "annotations.yaml"), annotations)
	if len(d.DependsOn) > 0 {
		var deps []any
		for _, r := range d.DependsOn {
			deps = append(deps, map[string]any{"type": "olm.package", "value": map[string]string{"packageName": r.Name, "version": r.VersionRange}})
		}
		writeYAML(t, filepath.Join(dir, "metadata", "dependencies.yaml"), map[string]any{"dependencies": deps})
	}
	return dir
}

func writeYAML(t testing.TB, path string, v any) {
	t.Helper()
	data, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Publish stores the bundle directory in the ConfigMap catalog catalogName of namespace, as `almctl publish` does.
func Publish(t testing.TB, c client.Client, dir, catalogName, namespace string) {
	t.Helper()
	b, problems := bundle.Load(dir)
	if b == nil {
		t.Fatalf("bundle %s does not load: %v", dir, problems)
	}
	cm, err := configmap.Encode(b, dir, catalogName, namespace)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(context.Background(), cm); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}
