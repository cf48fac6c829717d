package installer

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/test/harness"
)

// scope: everything namespaced except the usual cluster-scoped kinds; the Prometheus operator is not installed.
func scope(gvk schema.GroupVersionKind) (bool, bool, error) {
	switch gvk.Kind {
	case "ClusterRole", "ClusterRoleBinding", "PriorityClass", "CustomResourceDefinition":
		return false, true, nil
	case "ServiceMonitor", "PrometheusRule":
		return false, false, nil
	}
	return true, true, nil
}

func TestNewPlan(t *testing.T) {
	ov := harness.Demo{Namespace: "ns", Name: "demo.v1.0.0", Version: "1.0.0", ExtraObjects: []map[string]any{
		{"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor", "metadata": map[string]any{"name": "demo"}},
		{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": map[string]any{"name": "demo-critical", "namespace": "ignored"}, "value": int64(1000)},
	}}.OperatorVersion()
	p, err := NewPlan(ov, scope)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range p.All() {
		got = append(got, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
	}
	want := []string{
		"CustomResourceDefinition /widgets.demo.example.com",
		"ServiceAccount ns/demo-operator",
		"Role ns/demo.v1.0.0-demo-operator", "RoleBinding ns/demo.v1.0.0-demo-operator",
		"ClusterRole /alm:ns:demo.v1.0.0:demo-operator", "ClusterRoleBinding /alm:ns:demo.v1.0.0:demo-operator",
		"Service ns/demo-metrics", "ConfigMap ns/demo-config", "PriorityClass /demo-critical",
		"Deployment ns/demo-operator",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("plan objects, in apply order:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(p.Skipped) != 1 || p.Skipped[0] != "ServiceMonitor/demo" {
		t.Errorf("skipped = %v, want the ServiceMonitor (its API is not served)", p.Skipped)
	}
	if len(p.Deployments) != 1 || p.Deployments[0] != "demo-operator" {
		t.Errorf("deployments = %v", p.Deployments)
	}
}

func TestNewPlanRefusesInvalid(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*operatorsv1alpha1.OperatorVersion)
		want   string
	}{
		{"other strategy", func(o *operatorsv1alpha1.OperatorVersion) { o.Spec.Install.StrategyName = "helm" }, `spec.install.strategy is "helm"`},
		{"no deployments", func(o *operatorsv1alpha1.OperatorVersion) { o.Spec.Install.StrategySpec.DeploymentSpecs = nil }, "spec.install.spec.deployments is empty"},
		{"deployment without name", func(o *operatorsv1alpha1.OperatorVersion) { o.Spec.Install.StrategySpec.DeploymentSpecs[0].Name = "" }, "spec.install.spec.deployments[0].name is empty"},
		{"deployment without containers", func(o *operatorsv1alpha1.OperatorVersion) {
			o.Spec.Install.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec.Containers = nil
		}, "spec.install.spec.deployments[0] (demo-operator) has no containers"},
		{"permission without service account", func(o *operatorsv1alpha1.OperatorVersion) {
			o.Spec.Install.StrategySpec.Permissions[0].ServiceAccountName = ""
		}, "permissions[0].serviceAccountName is empty"},
		{"unsupported kind", func(o *operatorsv1alpha1.OperatorVersion) {
			o.Spec.Objects = append(o.Spec.Objects, runtime.RawExtension{Raw: []byte(`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"x"}}`)})
		}, "spec.objects[3] is a Job (batch/v1); ALM installs only CRDs and"},
		{"object without name", func(o *operatorsv1alpha1.OperatorVersion) {
			o.Spec.Objects = append(o.Spec.Objects, runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}`)})
		}, "spec.objects[3] (ConfigMap) has no metadata.name"},
		{"not an object", func(o *operatorsv1alpha1.OperatorVersion) {
			o.Spec.Objects = append(o.Spec.Objects, runtime.RawExtension{Raw: []byte(`[1,2]`)})
		}, "spec.objects[3] is not a Kubernetes object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ov := harness.Demo{Namespace: "ns", Name: "demo.v1.0.0", Version: "1.0.0"}.OperatorVersion()
			tc.mutate(ov)
			_, err := NewPlan(ov, scope)
			var invalid *InvalidError
			if !errors.As(err, &invalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewPlan error = %v, want an InvalidError containing %q", err, tc.want)
			}
		})
	}
}

func TestRBACNamesStayWithinLimits(t *testing.T) {
	long := strings.Repeat("x", 300)
	if n := RBACName(long, "sa"); len(n) > 253 {
		t.Errorf("RBACName length %d > 253", len(n))
	}
	if a, b := ClusterRBACName("ns", long, "a"), ClusterRBACName("ns", long, "b"); a == b || len(a) > 253 {
		t.Errorf("ClusterRBACName of long names: %d chars, distinct %v", len(a), a != b)
	}
}

// A bundle that ships a ServiceAccount under the install strategy's name (21% of real OperatorHub bundles) gets one
// ServiceAccount, in the ServiceAccounts' place, with the bundle's labels, annotations and imagePullSecrets; a CRD
// the CSV does not list as owned is planned like the owned ones.
func TestNewPlanMergesBundleServiceAccountAndInstallsEveryCRD(t *testing.T) {
	ov := harness.Demo{Namespace: "ns", Name: "demo.v1.0.0", Version: "1.0.0", ExtraObjects: []map[string]any{
		{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{
			"name": "demo-operator", "namespace": "elsewhere", "labels": map[string]any{"team": "demo"},
			"annotations": map[string]any{"eks.amazonaws.com/role-arn": "arn:demo"}, "uid": "stale"},
			"imagePullSecrets": []any{map[string]any{"name": "pull-secret"}}},
		{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": map[string]any{"name": "extras.demo.example.com"},
			"spec": map[string]any{"group": "demo.example.com", "scope": "Namespaced", "names": map[string]any{"kind": "Extra", "plural": "extras"},
				"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true, "schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object"}}}}}},
	}}.OperatorVersion()
	p, err := NewPlan(ov, scope)
	if err != nil {
		t.Fatal(err)
	}
	var accounts []string
	for i, o := range p.Objects {
		if o.GetKind() != "ServiceAccount" {
			continue
		}
		accounts = append(accounts, o.GetName())
		if i != 0 {
			t.Errorf("ServiceAccount planned at %d, want first (before RBAC and Deployments)", i)
		}
		if o.GetNamespace() != "ns" || o.GetLabels()["team"] != "demo" || o.GetAnnotations()["eks.amazonaws.com/role-arn"] != "arn:demo" || o.GetUID() != "" {
			t.Errorf("merged ServiceAccount = %v, want the bundle's labels and annotations in namespace ns without uid", o.Object)
		}
		if secrets, _, _ := unstructured.NestedSlice(o.Object, "imagePullSecrets"); len(secrets) != 1 {
			t.Errorf("imagePullSecrets = %v, want the bundle's", secrets)
		}
	}
	if strings.Join(accounts, ",") != "demo-operator" {
		t.Errorf("ServiceAccounts = %v, want one demo-operator", accounts)
	}
	var crds []string
	for _, c := range p.CRDs {
		crds = append(crds, c.GetName())
	}
	if !strings.Contains(strings.Join(crds, ","), "extras.demo.example.com") {
		t.Errorf("CRDs = %v, want the one the CSV does not own too", crds)
	}
}
