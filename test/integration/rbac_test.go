package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/policy"
	"github.com/almproject/alm/controllers/crdaccess"
	"github.com/almproject/alm/controllers/loops"
	"github.com/almproject/alm/controllers/registry"
	"github.com/almproject/alm/test/harness"
)

// ALM's loops, authenticated as a ServiceAccount bound to exactly the ClusterRole of config/rbac/role.yaml, install
// a bundle with every installable kind, including RBAC that grants what ALM itself does not hold, upgrade it by
// replaces (adoption) and collect the old version, without a single forbidden request.
func TestLeastPrivilegeRoleInstallsUpgradesAndCollects(t *testing.T) {
	c := harness.Client(t, cp)
	harness.RunKubelet(t, c, nil)
	optionalCRDs(t, c)
	logs := startALMAs(t, c, "alm-rbac-test")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("forbidden requests in ALM's log:\n%s", forbiddenLines(logs.String()))
		}
	})
	ns := harness.Namespace(t, c, "rbac")
	catalogSource(t, c, ns, "ops")
	bundles := t.TempDir()
	pkg := "rbac"
	harness.Publish(t, c, harness.WriteBundle(t, bundles, harness.Demo{
		Package: pkg, Name: "rbac.v1.0.0", Version: "1.0.0", ExtraObjects: everyKind(ns, "1.0.0"),
	}), "ops", ns)
	appType(t, c, ns, pkg)
	waitAppType(t, c, ns, pkg, 90*time.Second, installed("1.0.0"))
	v1 := &operatorsv1alpha1.OperatorVersion{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "rbac.v1.0.0"}, v1); err != nil {
		t.Fatal(err)
	}
	assertInstalled(t, c, v1, everyKind(ns, "1.0.0"))

	harness.Publish(t, c, harness.WriteBundle(t, bundles, harness.Demo{
		Package: pkg, Name: "rbac.v1.1.0", Version: "1.1.0", Replaces: "rbac.v1.0.0", ExtraObjects: everyKind(ns, "1.1.0"),
	}), "ops", ns)
	waitAppType(t, c, ns, pkg, 90*time.Second, installed("1.1.0"))
	harness.WaitGone(t, c, v1, 60*time.Second)
	v2 := &operatorsv1alpha1.OperatorVersion{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "rbac.v1.1.0"}, v2); err != nil {
		t.Fatal(err)
	}
	assertInstalled(t, c, v2, everyKind(ns, "1.1.0"))
	// The cluster-scoped RBAC of the install strategy is per version: 1.0.0's went with it.
	old := &rbacv1.ClusterRole{}
	err := c.Get(t.Context(), client.ObjectKey{Name: "alm:" + ns + ":rbac.v1.0.0:rbac-operator"}, old)
	if !apierrors.IsNotFound(err) {
		t.Errorf("ClusterRole of rbac.v1.0.0 after its collection: %v, want NotFound", err)
	}

	if text := logs.String(); strings.Contains(strings.ToLower(text), "forbidden") {
		t.Errorf("ALM's log has a forbidden request with the least-privilege role:\n%s", forbiddenLines(text))
	}
}

// startALMAs creates ServiceAccount alm-system/name bound to the ClusterRole of config/rbac/role.yaml and runs every
// loop as that ServiceAccount; it returns the loops' log (controller-runtime's and client-go's).
func startALMAs(t *testing.T, c client.Client, name string) *syncBuffer {
	t.Helper()
	role := loadClusterRole(t)
	role.Name = name // the role as generated, under a name of the test's own
	if err := c.Create(t.Context(), role); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	cfg, err := cp.ServiceAccountConfig(t.Context(), almNamespace, name)
	if err != nil {
		t.Fatal(err)
	}
	// As config/rbac binds ALM's ServiceAccount: to its role, and to the one the crdaccess loop maintains.
	for bindingName, roleName := range map[string]string{name: name, name + "-custom-resources": crdaccess.ClusterRoleName} {
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: bindingName},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: roleName},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: almNamespace, Name: name}},
		}
		if err := c.Create(t.Context(), binding); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	logs := &syncBuffer{}
	log := zap.New(zap.WriteTo(logs), zap.UseDevMode(true))
	klog.SetLogger(log) // client-go's reflectors report a forbidden list or watch through klog
	t.Cleanup(func() { klog.SetLogger(logr.Discard()) })
	selected, err := loops.Select("all")
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: harness.Scheme(), Logger: log,
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := loops.Options{Registry: registry.New(), Namespace: almNamespace, InstallTimeout: 60 * time.Second, CatalogResync: 2 * time.Second}
	for _, l := range selected {
		if err := l.Setup(mgr, opts); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager stopped with an error: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return logs
}

func loadClusterRole(t *testing.T) *rbacv1.ClusterRole {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		role := &rbacv1.ClusterRole{}
		if err := yaml.Unmarshal([]byte(doc), role); err != nil {
			t.Fatal(err)
		}
		if role.Kind == "ClusterRole" {
			return role
		}
	}
	t.Fatal("config/rbac/role.yaml has no ClusterRole")
	return nil
}

// optionalCRDs serves the optional installable kinds (VerticalPodAutoscaler, ServiceMonitor, PrometheusRule), so
// that ALM really installs them rather than skipping them.
func optionalCRDs(t *testing.T, c client.Client) {
	t.Helper()
	for _, k := range policy.InstallableKinds() {
		if !k.Optional {
			continue
		}
		plural := strings.ToLower(k.Kind) + "s"
		crd := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: plural + "." + k.Group,
				// A *.k8s.io group (autoscaling.k8s.io) needs it; the real CRD has it.
				Annotations: map[string]string{"api-approved.kubernetes.io": "https://github.com/kubernetes/kubernetes/pull/63797"}},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: k.Group, Scope: apiextensionsv1.NamespaceScoped,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: k.Kind, ListKind: k.Kind + "List", Plural: plural, Singular: strings.ToLower(k.Kind)},
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
						Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
			},
		}
		if err := c.Create(t.Context(), crd); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		harness.Eventually(t, 30*time.Second, func() error {
			got := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(crd), got); err != nil {
				return err
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return nil
				}
			}
			return fmt.Errorf("CRD %s not established", crd.Name)
		})
	}
}

// everyKind is one object of every installable kind besides those harness.Demo ships (Service, ConfigMap). Its
// RBAC grants what ALM's own role does not: pods, deletecollection on Secrets, nodes, and the demo's widgets.
func everyKind(ns, version string) []map[string]any {
	obj := func(apiVersion, kind, name string, fields map[string]any) map[string]any {
		o := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name}}
		for k, v := range fields {
			o[k] = v
		}
		return o
	}
	sa := map[string]any{"kind": "ServiceAccount", "name": "rbac-worker", "namespace": ns}
	cluster := "rbac-extra-" + ns // cluster-scoped names carry the namespace: the test may run more than once
	return []map[string]any{
		obj("v1", "Secret", "rbac-credentials", map[string]any{"stringData": map[string]any{"password": "v" + version}}),
		obj("v1", "ServiceAccount", "rbac-worker", nil),
		obj("rbac.authorization.k8s.io/v1", "Role", "rbac-extra", map[string]any{"rules": []any{
			map[string]any{"apiGroups": []any{""}, "resources": []any{"pods", "pods/log"}, "verbs": []any{"get", "list", "watch"}},
			map[string]any{"apiGroups": []any{""}, "resources": []any{"secrets"}, "verbs": []any{"deletecollection"}},
			map[string]any{"apiGroups": []any{"batch"}, "resources": []any{"jobs"}, "verbs": []any{"create", "delete"}},
		}}),
		obj("rbac.authorization.k8s.io/v1", "RoleBinding", "rbac-extra", map[string]any{
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "rbac-extra"},
			"subjects": []any{sa},
		}),
		obj("rbac.authorization.k8s.io/v1", "ClusterRole", cluster, map[string]any{"rules": []any{
			map[string]any{"apiGroups": []any{""}, "resources": []any{"nodes"}, "verbs": []any{"get", "list", "watch"}},
			map[string]any{"apiGroups": []any{"rbac.example.com"}, "resources": []any{"widgets"}, "verbs": []any{"get", "list"}},
		}}),
		obj("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", cluster, map[string]any{
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": cluster},
			"subjects": []any{sa},
		}),
		obj("policy/v1", "PodDisruptionBudget", "rbac-operator", map[string]any{"spec": map[string]any{
			"minAvailable": int64(1), "selector": map[string]any{"matchLabels": map[string]any{"app": "rbac-operator"}},
		}}),
		obj("scheduling.k8s.io/v1", "PriorityClass", cluster, map[string]any{"value": int64(1000)}),
		obj("autoscaling.k8s.io/v1", "VerticalPodAutoscaler", "rbac-operator", map[string]any{"spec": map[string]any{"version": version}}),
		obj("monitoring.coreos.com/v1", "ServiceMonitor", "rbac-operator", map[string]any{"spec": map[string]any{"version": version}}),
		obj("monitoring.coreos.com/v1", "PrometheusRule", "rbac-operator", map[string]any{"spec": map[string]any{"version": version}}),
	}
}

// assertInstalled checks that every object of objects exists and is owned by ov.
func assertInstalled(t *testing.T, c client.Client, ov *operatorsv1alpha1.OperatorVersion, objects []map[string]any) {
	t.Helper()
	for _, o := range objects {
		u := &unstructured.Unstructured{Object: o}
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(schema.FromAPIVersionAndKind(u.GetAPIVersion(), u.GetKind()))
		key := client.ObjectKey{Name: u.GetName()}
		if k, _ := policy.Installable(got.GroupVersionKind().GroupKind()); k.Kind != "PriorityClass" && !strings.HasPrefix(k.Kind, "Cluster") {
			key.Namespace = ov.Namespace
		}
		if err := c.Get(t.Context(), key, got); err != nil {
			t.Errorf("%s %s of %s: %v", u.GetKind(), key, ov.Name, err)
			continue
		}
		if owner := got.GetLabels()[operatorsv1alpha1.LabelOwner]; owner != ov.Name {
			t.Errorf("%s %s is owned by %q, want %s", u.GetKind(), key, owner, ov.Name)
		}
	}
	sa := &corev1.ServiceAccount{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ov.Namespace, Name: "rbac-operator"}, sa); err != nil {
		t.Errorf("ServiceAccount of the install strategy: %v", err)
	}
}

func forbiddenLines(text string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(strings.ToLower(line), "forbidden") {
			out = append(out, line)
			if len(out) == 10 {
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// syncBuffer is a bytes.Buffer for several goroutines' logs.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
