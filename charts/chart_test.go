// Package charts_test checks the Helm chart charts/alm with the pinned helm (bin/helm): it lints, and with its default
// values it renders the objects `kubectl kustomize config/default` does, object by object, but for the differences
// listed in allowed; with values set it changes what they say and nothing else.
package charts_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/almproject/alm/test/helm"
)

const (
	chart     = "alm"
	release   = "alm"
	namespace = "alm-system"
)

// chartLabels are the labels the chart adds to every object's metadata (never to selectors or pod templates), as Helm
// charts do, with the values they have for release "alm".
var chartLabels = map[string]string{
	"app.kubernetes.io/name":       "alm",
	"app.kubernetes.io/instance":   release,
	"app.kubernetes.io/version":    "0.1.0",
	"app.kubernetes.io/managed-by": "Helm",
	"helm.sh/chart":                "alm-0.1.0",
}

// allowed lists every difference between the chart's objects and config/default's, and why. allow removes them from
// got (the chart's object), given want (config/default's), and fails the test on a difference it does not allow.
var allowed = []string{
	"config/default's Namespace alm-system is not rendered: `helm install --namespace alm-system --create-namespace` " +
		"creates it, and a chart that owned its namespace would delete it, with every AppType and CatalogSource in it, on uninstall",
	"metadata.labels gain Helm's standard labels (chartLabels) where config/ has none of that name",
	"CustomResourceDefinitions carry the annotation helm.sh/resource-policy: keep: `helm uninstall` keeps them, " +
		"as deleting a CRD deletes all its objects (crds.keep=false drops it)",
	"the manager container has imagePullPolicy: IfNotPresent, what the API server sets for an image whose tag is not latest",
}

func allow(t *testing.T, got, want *unstructured.Unstructured) {
	t.Helper()
	labels := got.GetLabels()
	for k, v := range chartLabels {
		if _, own := want.GetLabels()[k]; own {
			continue
		}
		if labels[k] != v {
			t.Errorf("%s: label %s=%q, want %q", helm.Key(got), k, labels[k], v)
		}
		delete(labels, k)
	}
	setOrDrop(got, "labels", labels)
	if got.GetKind() == "CustomResourceDefinition" {
		annotations := got.GetAnnotations()
		if annotations["helm.sh/resource-policy"] != "keep" {
			t.Errorf("%s: no helm.sh/resource-policy: keep annotation", helm.Key(got))
		}
		delete(annotations, "helm.sh/resource-policy")
		setOrDrop(got, "annotations", annotations)
	}
	if got.GetKind() == "Deployment" {
		containers, _, _ := unstructured.NestedSlice(got.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			if c := c.(map[string]any); c["imagePullPolicy"] == "IfNotPresent" {
				delete(c, "imagePullPolicy")
			}
		}
		_ = unstructured.SetNestedSlice(got.Object, containers, "spec", "template", "spec", "containers")
	}
}

func setOrDrop(o *unstructured.Unstructured, field string, m map[string]string) {
	if len(m) == 0 {
		unstructured.RemoveNestedField(o.Object, "metadata", field)
		return
	}
	_ = unstructured.SetNestedStringMap(o.Object, m, "metadata", field)
}

func byKey(objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	out := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		out[helm.Key(o)] = o
	}
	return out
}

// compare fails the test unless got and want hold the same objects but for the allowed differences; missing lists
// the keys of want's objects that got may lack.
func compare(t *testing.T, got, want []*unstructured.Unstructured, missing ...string) {
	t.Helper()
	g, w := byKey(got), byKey(want)
	for _, k := range slices.Sorted(maps.Keys(w)) {
		if g[k] == nil {
			if !slices.Contains(missing, k) {
				t.Errorf("the chart does not render %s", k)
			}
			continue
		}
		allow(t, g[k], w[k])
		if diff := cmp.Diff(w[k].Object, g[k].Object); diff != "" {
			t.Errorf("%s differs from config/'s (-config +chart; charts/alm/files is copied from config/ by make chart):\n%s", k, diff)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(g)) {
		if w[k] == nil {
			t.Errorf("the chart renders %s, which config/ does not have", k)
		}
	}
}

// TestChartRendersConfigDefault: helm lint passes, and with default values the chart renders config/default.
func TestChartRendersConfigDefault(t *testing.T) {
	for _, d := range allowed {
		t.Logf("allowed difference: %s", d)
	}
	if out, err := helm.Run(t, "lint", "--strict", "--namespace", namespace, chart); err != nil {
		t.Fatalf("%v", err)
	} else {
		t.Logf("%s", out)
	}
	kustomized, err := helm.Kustomize(t, "../config/default")
	if err != nil {
		t.Fatal(err)
	}
	want, err := helm.Objects(kustomized)
	if err != nil {
		t.Fatal(err)
	}
	got := helm.Template(t, chart, release, namespace)
	compare(t, got, want, "/Namespace /alm-system")
	t.Logf("compared %d objects of config/default with the chart's %d", len(want), len(got))
}
