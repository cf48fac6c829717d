package charts_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/almproject/alm/test/helm"
)

// container returns the manager container and the pod spec of the chart's Deployment.
func container(t *testing.T, objs []*unstructured.Unstructured) (map[string]any, map[string]any) {
	t.Helper()
	d := helm.Find(objs, "Deployment", "alm-manager")
	if d == nil {
		t.Fatal("no Deployment alm-manager")
	}
	pod, _, _ := unstructured.NestedMap(d.Object, "spec", "template", "spec")
	containers, _ := pod["containers"].([]any)
	return containers[0].(map[string]any), pod
}

func args(c map[string]any) []string {
	var out []string
	for _, a := range c["args"].([]any) {
		out = append(out, a.(string))
	}
	return out
}

func same(t *testing.T, what string, got, want any) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

// Image, pull secrets and resources go where Kubernetes reads them.
func TestChartImageAndResources(t *testing.T) {
	c, pod := container(t, helm.Template(t, chart, release, namespace,
		"--set", "image.repository=registry.example.com/team/alm,image.tag=0.2.0,image.pullPolicy=Always",
		"--set", "imagePullSecrets[0].name=regcred,resources.requests.cpu=200m,resources.limits.memory=1Gi"))
	same(t, "image", c["image"], "registry.example.com/team/alm:0.2.0")
	same(t, "imagePullPolicy", c["imagePullPolicy"], "Always")
	same(t, "imagePullSecrets", pod["imagePullSecrets"], []any{map[string]any{"name": "regcred"}})
	same(t, "resources", c["resources"], map[string]any{
		"requests": map[string]any{"cpu": "200m", "memory": "64Mi"}, "limits": map[string]any{"memory": "1Gi"}})
}

// ALM's flags: every value becomes the flag --help documents, and the defaults add none (ALM's own defaults hold).
func TestChartFlags(t *testing.T) {
	c, pod := container(t, helm.Template(t, chart, release, namespace,
		"--set", "loops=catalog,leaderElection.enabled=false,leaderElection.id=alm-catalog,leaderElection.namespace=kube-system",
		"--set", "trust.allNamespaces=true,catalog.directoryRoot=/catalogs,catalog.resync=1m,catalog.scratchBytes=3Gi",
		"--set", "bundleCache.bytes=2Gi,bundleCache.size=128,tmp.sizeLimit=6Gi,installTimeout=10m,maxConcurrentReconciles=8",
		"--set", "kubeAPI.qps=50,kubeAPI.burst=100,metrics.port=9443,metrics.secure=false,healthProbe.port=9081",
		"--set", "extraArgs[0]=--zap-log-level=debug"))
	same(t, "args", args(c), []string{
		"--loops=catalog", "--health-probe-bind-address=:9081", "--metrics-bind-address=:9443", "--metrics-secure=false",
		"--trust-all-namespaces", "--bundle-cache-bytes=2Gi", "--bundle-cache-size=128", "--catalog-resync=1m",
		"--catalog-scratch-bytes=3Gi", "--directory-catalog-root=/catalogs", "--install-timeout=10m", "--kube-api-burst=100",
		"--kube-api-qps=50", "--leader-election-id=alm-catalog", "--leader-election-namespace=kube-system",
		"--max-concurrent-reconciles=8", "--zap-log-level=debug",
	})
	same(t, "ports", c["ports"], []any{
		map[string]any{"name": "metrics", "containerPort": float64(9443)},
		map[string]any{"name": "probes", "containerPort": float64(9081)},
	})
	volumes, _ := pod["volumes"].([]any)
	same(t, "volumes", volumes, []any{map[string]any{"name": "tmp", "emptyDir": map[string]any{"sizeLimit": "6Gi"}}})
}

// Another namespace: every namespaced object, every subject and the admission policy's ServiceAccount follow it.
func TestChartNamespace(t *testing.T) {
	out, err := helm.Run(t, "template", release, chart, "--namespace", "operators", "--set", "metrics.serviceMonitor.enabled=true,metrics.prometheusRule.enabled=true")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "alm-system") {
		t.Errorf("rendered in namespace operators, the chart still names alm-system")
	}
	objs, err := helm.Objects(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetNamespace() != "" && o.GetNamespace() != "operators" {
			t.Errorf("%s is not in the release namespace", helm.Key(o))
		}
	}
	vap := helm.Find(objs, "ValidatingAdmissionPolicy", "alm-operatorversions")
	conds, _, _ := unstructured.NestedSlice(vap.Object, "spec", "matchConditions")
	same(t, "the policy's exemption", conds[0].(map[string]any)["expression"], "request.userInfo.username != 'system:serviceaccount:operators:alm-manager'")
}

// CRDs: kept on uninstall by default; crds.keep=false lets Helm delete them, crds.enabled=false leaves them out.
func TestChartCRDs(t *testing.T) {
	crds := func(args ...string) (n, kept int) {
		for _, o := range helm.Template(t, chart, release, namespace, args...) {
			if o.GetKind() == "CustomResourceDefinition" {
				n++
				if o.GetAnnotations()["helm.sh/resource-policy"] == "keep" {
					kept++
				}
			}
		}
		return n, kept
	}
	for _, tc := range []struct {
		set         string
		n, wantKept int
	}{{"crds.keep=true", 3, 3}, {"crds.keep=false", 3, 0}, {"crds.enabled=false", 0, 0}} {
		if n, kept := crds("--set", tc.set); n != tc.n || kept != tc.wantKept {
			t.Errorf("--set %s: %d CRDs, %d kept; want %d, %d", tc.set, n, kept, tc.n, tc.wantKept)
		}
	}
}

// Monitoring: off by default; on, the chart renders config/prometheus's Service, ServiceMonitor, binding and alerts
// (but for the allowed differences, and its PodMonitor, which scrapes the Konnect operator ALM installs, not ALM).
func TestChartMonitoring(t *testing.T) {
	base := byKey(helm.Template(t, chart, release, namespace))
	var added []*unstructured.Unstructured
	for _, o := range helm.Template(t, chart, release, namespace, "--set", "metrics.serviceMonitor.enabled=true,metrics.prometheusRule.enabled=true") {
		if base[helm.Key(o)] == nil {
			added = append(added, o)
		}
	}
	kustomized, err := helm.Kustomize(t, "../config/prometheus")
	if err != nil {
		t.Fatal(err)
	}
	want, err := helm.Objects(kustomized)
	if err != nil {
		t.Fatal(err)
	}
	compare(t, added, want, "monitoring.coreos.com/PodMonitor alm-system/konnect-operator")

	// Plain HTTP (metrics.secure=false) is scraped as plain HTTP, without a token.
	objs := helm.Template(t, chart, release, namespace, "--set", "metrics.serviceMonitor.enabled=true,metrics.secure=false")
	endpoints, _, _ := unstructured.NestedSlice(helm.Find(objs, "ServiceMonitor", "alm-manager").Object, "spec", "endpoints")
	same(t, "endpoints with metrics.secure=false", endpoints, []any{map[string]any{
		"port": "metrics", "path": "/metrics", "interval": "30s", "honorLabels": true, "scheme": "http"}})
}

// A certificate for /metrics: its Secret is mounted and named by --metrics-cert-dir.
func TestChartMetricsCertificate(t *testing.T) {
	c, pod := container(t, helm.Template(t, chart, release, namespace, "--set", "metrics.certSecret=alm-metrics-tls"))
	if !slices.Contains(args(c), "--metrics-cert-dir=/etc/alm/metrics-cert") {
		t.Errorf("args %v: no --metrics-cert-dir", args(c))
	}
	same(t, "volumeMounts", c["volumeMounts"], []any{
		map[string]any{"name": "tmp", "mountPath": "/tmp"},
		map[string]any{"name": "metrics-cert", "mountPath": "/etc/alm/metrics-cert", "readOnly": true},
	})
	same(t, "volumes", pod["volumes"], []any{
		map[string]any{"name": "tmp", "emptyDir": map[string]any{"sizeLimit": "4Gi"}},
		map[string]any{"name": "metrics-cert", "secret": map[string]any{"secretName": "alm-metrics-tls"}},
	})
}

// A misspelt or invalid value is refused (values.schema.json), not silently ignored.
func TestChartRefusesUnknownValues(t *testing.T) {
	for set, want := range map[string]string{
		"metrics.prot=9443":              "additional properties 'prot' not allowed",
		"trust.allnamespaces=true":       "additional properties 'allnamespaces' not allowed",
		"catalog.directoryRoot=relative": "does not match pattern",
		"metrics.port=0":                 "minimum",
	} {
		_, err := helm.Run(t, "template", release, chart, "--namespace", namespace, "--set", set)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--set %s: %v, want an error saying %q", set, err, want)
		}
	}
}
