// Package prometheus_test checks that config/prometheus scrapes what the components expose: the ServiceMonitor
// selects the metrics Service, which selects ALM's pods and their metrics port, and scrapes it as ALM serves it
// (HTTPS, with a token the shipped binding lets read /metrics); the PodMonitor selects the Konnect operator's pods and
// port as its bundles declare them. The alerts are tested by promtool (Prometheus's own rule engine): on the unit
// tests in tests/ here (TestAlertRules), and on the components' real metrics in test/integration (TestAlerts) and
// controllers/konnect (TestAlertErrorRate).
package prometheus_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
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

// kustomizationLists fails unless dir's kustomization.yaml lists file among its resources.
func kustomizationLists(t *testing.T, dir, file string) {
	t.Helper()
	var k struct{ Resources []string }
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(k.Resources, file) {
		t.Errorf("%s/kustomization.yaml does not list %s (resources: %v)", dir, file, k.Resources)
	}
}

// ALM's metrics are scraped as ALM serves them: HTTPS on the port its --metrics-bind-address names (never
// --metrics-secure=false), with the scraper's ServiceAccount token, which the shipped binding lets read /metrics.
func TestALMMetricsAreScrapedOverHTTPSWithAToken(t *testing.T) {
	deploy := one[appsv1.Deployment](t, filepath.Join("..", "manager", "manager.yaml"), "Deployment")
	c := deploy.Spec.Template.Spec.Containers[0]
	var port int32
	for _, p := range c.Ports {
		if p.Name == "metrics" {
			port = p.ContainerPort
		}
	}
	if want := fmt.Sprintf("--metrics-bind-address=:%d", port); !slices.Contains(c.Args, want) {
		t.Errorf("container %s args %v: want %s, the container port named metrics", c.Name, c.Args, want)
	}
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--metrics-secure") {
			t.Errorf("container %s passes %s: ALM's metrics must stay HTTPS with authentication (the default)", c.Name, a)
		}
	}

	sm := one[unstructured.Unstructured](t, "servicemonitor.yaml", "ServiceMonitor")
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	for i, e := range endpoints {
		ep := e.(map[string]any)
		if ep["scheme"] != "https" {
			t.Errorf("ServiceMonitor endpoints[%d].scheme is %v: ALM serves /metrics over HTTPS only", i, ep["scheme"])
		}
		if ep["bearerTokenFile"] == nil && ep["authorization"] == nil {
			t.Errorf("ServiceMonitor endpoints[%d] sends no token (bearerTokenFile or authorization): ALM answers 401", i)
		}
		if ep["tlsConfig"] == nil {
			t.Errorf("ServiceMonitor endpoints[%d] has no tlsConfig: Prometheus cannot verify ALM's self-signed certificate", i)
		}
	}

	binding := one[rbacv1.ClusterRoleBinding](t, "metrics_reader_binding.yaml", "ClusterRoleBinding")
	role := one[rbacv1.ClusterRole](t, filepath.Join("..", "rbac", "metrics_reader_role.yaml"), "ClusterRole")
	if binding.RoleRef.Kind != "ClusterRole" || binding.RoleRef.Name != role.Name || len(binding.Subjects) == 0 {
		t.Errorf("ClusterRoleBinding %s binds %v to %s %s: want a ServiceAccount bound to ClusterRole %s", binding.Name, binding.Subjects, binding.RoleRef.Kind, binding.RoleRef.Name, role.Name)
	}
	want := []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}
	if role.Name != "alm-metrics-reader" || !reflect.DeepEqual(role.Rules, want) {
		t.Errorf("ClusterRole %s grants %+v: want alm-metrics-reader granting exactly %+v", role.Name, role.Rules, want)
	}
	kustomizationLists(t, filepath.Join("..", "rbac"), "metrics_reader_role.yaml")
	kustomizationLists(t, ".", "metrics_reader_binding.yaml")
}
