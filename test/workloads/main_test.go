// Package workloads tests ALM's loops against operators that run as real pods: webhooks called by the real
// kube-apiserver, serving certificates renewed in place and rolled out, and a rollback after a readiness probe fails.
//
// One local environment (test/localenv) serves the whole package: a local cluster with one real node (containerd,
// runc, kubelet, kube-proxy) and its registry, without ALM deployed (localenv.Options.NoALM). ALM's loops run in the
// test process (harness.StartManager, as test/integration runs them), so a test can stop and start them and move
// their clock; they reach a webhook Service's cluster IP from the host through kube-proxy, as from a pod. The
// operators' images are pushed to the registry as alm.local/<name>:<tag> and pulled by containerd.
package workloads

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/image"
	"github.com/almproject/alm/controllers/loops"
	"github.com/almproject/alm/controllers/metrics"
	"github.com/almproject/alm/controllers/registry"
	"github.com/almproject/alm/test/harness"
	"github.com/almproject/alm/test/localenv"
	"github.com/almproject/alm/test/localkube"
)

var (
	// env is the package's local environment; cp its cluster.
	env *localenv.Env
	cp  *localkube.Cluster
	// root is the repository root.
	root string
)

const almNamespace = "alm-system"

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	if testing.Short() {
		fmt.Fprintln(os.Stderr, "workloads: skipped in -short (the tests need the real node)")
		return 0
	}
	ctrllog.SetLogger(logr.Discard()) // envtest logs through controller-runtime
	var err error
	if root, err = localkube.RepoRoot(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "alm-workloads-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := 1
	defer func() {
		if code == 0 {
			_ = os.RemoveAll(dir)
		} else {
			fmt.Fprintf(os.Stderr, "workloads: the environment's logs (the cluster's kube.log, the node's node.log) are kept in %s\n", dir)
		}
	}()
	start := time.Now()
	if env, err = localenv.Start(context.Background(), localenv.Options{Root: root, StateDir: dir, NoALM: true}); err != nil {
		fmt.Fprintf(os.Stderr, "workloads: starting the local environment (run make tools images first): %v\n", err)
		return code
	}
	fmt.Fprintf(os.Stderr, "workloads: the local environment started in %s (a wait for another run's node included)\n", time.Since(start).Round(100*time.Millisecond))
	defer func() {
		stop := time.Now()
		env.Stop()
		fmt.Fprintf(os.Stderr, "workloads: the local environment stopped in %s\n", time.Since(stop).Round(100*time.Millisecond))
	}()
	cp = env.CP
	if _, err := envtest.InstallCRDs(cp.Config, envtest.CRDInstallOptions{
		Paths: []string{filepath.Join(root, "config", "crd", "bases")}, ErrorIfPathMissing: true,
	}); err != nil {
		fmt.Fprintf(os.Stderr, "workloads: installing ALM's CRDs: %v\n", err)
		return code
	}
	code = m.Run()
	return code
}

// startALM runs the loops named by spec ("all", ...) in one manager in the test process, with options as the tests
// use them, changed by mutate.
func startALM(t *testing.T, spec string, mutate ...func(*loops.Options)) *harness.Manager {
	t.Helper()
	selected, err := loops.Select(spec)
	if err != nil {
		t.Fatal(err)
	}
	opts := loops.Options{Registry: registry.New(), Namespace: almNamespace, InstallTimeout: 20 * time.Second, CatalogResync: 2 * time.Second,
		Bundles: loops.NewBundles(&image.BundleCache{Dir: t.TempDir()}, almNamespace)}
	for _, m := range mutate {
		m(&opts)
	}
	return harness.StartManager(t, cp, func(mgr ctrl.Manager) error {
		metrics.Watch(mgr.GetCache()) // as cmd/alm does
		for _, l := range selected {
			if err := l.Setup(mgr, opts); err != nil {
				return err
			}
		}
		return nil
	})
}

// catalogSource creates a ConfigMap CatalogSource named name in namespace.
func catalogSource(t *testing.T, c client.Client, namespace, name string) {
	t.Helper()
	cs := &operatorsv1alpha1.CatalogSource{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       operatorsv1alpha1.CatalogSourceSpec{DisplayName: "test catalog", ConfigMap: &operatorsv1alpha1.ConfigMapSource{}},
	}
	if err := c.Create(t.Context(), cs); err != nil {
		t.Fatal(err)
	}
}

func appType(t *testing.T, c client.Client, namespace, pkg string, mutate ...func(*operatorsv1alpha1.AppType)) *operatorsv1alpha1.AppType {
	t.Helper()
	at := &operatorsv1alpha1.AppType{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: pkg}, Spec: operatorsv1alpha1.AppTypeSpec{Package: pkg}}
	for _, m := range mutate {
		m(at)
	}
	if err := c.Create(t.Context(), at); err != nil {
		t.Fatal(err)
	}
	return at
}

// waitAppType waits until the AppType passes check, and returns it.
func waitAppType(t *testing.T, c client.Client, namespace, name string, timeout time.Duration, check func(*operatorsv1alpha1.AppType) error) *operatorsv1alpha1.AppType {
	t.Helper()
	at := &operatorsv1alpha1.AppType{}
	harness.Eventually(t, timeout, func() error {
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, at); err != nil {
			return err
		}
		return check(at)
	})
	return at
}

func installed(version string) func(*operatorsv1alpha1.AppType) error {
	return func(at *operatorsv1alpha1.AppType) error {
		ready := apimeta.IsStatusConditionTrue(at.Status.Conditions, operatorsv1alpha1.ConditionReady)
		if at.Status.InstalledVersion != version || !ready {
			return fmt.Errorf("AppType %s: installed %q ready %v (%v), want %s ready", at.Name, at.Status.InstalledVersion, ready, at.Status.Conditions, version)
		}
		return nil
	}
}

// waitOV waits until OperatorVersion ns/name passes check, and returns it.
func waitOV(t *testing.T, c client.Client, ns, name string, check func(*operatorsv1alpha1.OperatorVersion) error) *operatorsv1alpha1.OperatorVersion {
	t.Helper()
	ov := &operatorsv1alpha1.OperatorVersion{}
	harness.Eventually(t, 60*time.Second, func() error {
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, ov); err != nil {
			return err
		}
		return check(ov)
	})
	return ov
}
