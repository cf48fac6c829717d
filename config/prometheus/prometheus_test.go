// Package prometheus_test checks that config/prometheus scrapes what the components expose: the ServiceMonitor
// selects the metrics Service, which selects ALM's pods and their metrics port, and the PodMonitor selects the
// Konnect operator's pods and port as its bundles declare them. The alerts are tested against the real metrics in
// test/integration (TestAlerts) and controllers/konnect (TestAlertErrorRate).
package prometheus_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// documents reads the YAML documents of a file.
func documents(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, doc := range strings.Split(string(data), "\n---\n") {
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(m) > 0 {
			out = append(out, m)
		}
	}
	return out
}

func one[T any](t *testing.T, path, kind string) *T {
	t.Helper()
	for _, d := range documents(t, path) {
		if d["kind"] == kind {
			out := new(T)
			data, _ := yaml.Marshal(d)
			if err := yaml.Unmarshal(data, out); err != nil {
				t.Fatal(err)
			}
			return out
		}
	}
	t.Fatalf("%s has no %s", path, kind)
	return nil
}

func containerPort(t *testing.T, spec corev1.PodSpec, name string) {
	t.Helper()
	for _, c := range spec.Containers {
		for _, p := range c.Ports {
			if p.Name == name {
				return
			}
		}
	}
	t.Errorf("no container port named %s", name)
}

func TestMonitorsSelectTheMetricsEndpoints(t *testing.T) {
	deploy := one[appsv1.Deployment](t, filepath.Join("..", "manager", "manager.yaml"), "Deployment")
	svc := one[corev1.Service](t, "service.yaml", "Service")
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(deploy.Spec.Template.Labels)) || svc.Namespace != deploy.Namespace {
		t.Errorf("Service %s/%s selects %v, not ALM's pods %s/%v", svc.Namespace, svc.Name, svc.Spec.Selector, deploy.Namespace, deploy.Spec.Template.Labels)
	}
	containerPort(t, deploy.Spec.Template.Spec, svc.Spec.Ports[0].TargetPort.String())

	sm := one[unstructured.Unstructured](t, "servicemonitor.yaml", "ServiceMonitor")
	sel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	if !labels.SelectorFromSet(sel).Matches(labels.Set(svc.Labels)) {
		t.Errorf("ServiceMonitor selects %v, not the Service's labels %v", sel, svc.Labels)
	}
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(endpoints) != 1 || endpoints[0].(map[string]any)["port"] != svc.Spec.Ports[0].Name || endpoints[0].(map[string]any)["honorLabels"] != true {
		t.Errorf("ServiceMonitor endpoints %v: want port %s with honorLabels (the metrics' own namespace label)", endpoints, svc.Spec.Ports[0].Name)
	}

	csvs, _ := filepath.Glob(filepath.Join("..", "..", "bundles", "konnect-operator", "*", "manifests", "konnect-operator.clusterserviceversion.yaml"))
	if len(csvs) == 0 {
		t.Fatal("no Konnect operator bundles")
	}
	pm := one[unstructured.Unstructured](t, "podmonitor.yaml", "PodMonitor")
	pmSel, _, _ := unstructured.NestedStringMap(pm.Object, "spec", "selector", "matchLabels")
	pmEndpoints, _, _ := unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
	for _, path := range csvs {
		csv := one[unstructured.Unstructured](t, path, "ClusterServiceVersion")
		deployments, _, _ := unstructured.NestedSlice(csv.Object, "spec", "install", "spec", "deployments")
		d := &appsv1.DeploymentSpec{}
		data, _ := yaml.Marshal(deployments[0].(map[string]any)["spec"])
		if err := yaml.Unmarshal(data, d); err != nil {
			t.Fatal(err)
		}
		if !labels.SelectorFromSet(pmSel).Matches(labels.Set(d.Template.Labels)) {
			t.Errorf("%s: PodMonitor selects %v, not the pods' labels %v", path, pmSel, d.Template.Labels)
		}
		containerPort(t, d.Template.Spec, pmEndpoints[0].(map[string]any)["port"].(string))
	}
}
