// Package loopstest runs ALM's loops in a test's process against a local cluster and declares what the tests of
// those loops declare: a ConfigMap CatalogSource, an AppType, waits on AppTypes and OperatorVersions. test/integration
// (an API server only) and test/workloads (operators running as pods on the real node) share it. It is apart from
// test/harness because it imports the loops, whose own tests import harness.
package loopstest

import (
	"fmt"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/image"
	"github.com/almproject/alm/controllers/loops"
	"github.com/almproject/alm/controllers/metrics"
	"github.com/almproject/alm/controllers/registry"
	"github.com/almproject/alm/test/harness"
	"github.com/almproject/alm/test/localkube"
)

// Start runs the loops named by spec ("all", "catalog", "lifecycle", ...) in one manager on cp, with ALM's namespace
// namespace and the options the tests use (installs time out after 20s, directory catalogs are read every 2s),
// changed by mutate.
func Start(t *testing.T, cp *localkube.Cluster, namespace, spec string, mutate ...func(*loops.Options)) *harness.Manager {
	t.Helper()
	selected, err := loops.Select(spec)
	if err != nil {
		t.Fatal(err)
	}
	opts := loops.Options{Registry: registry.New(), Namespace: namespace, InstallTimeout: 20 * time.Second, CatalogResync: 2 * time.Second,
		Bundles: loops.NewBundles(&image.BundleCache{Dir: t.TempDir()}, namespace)}
	for _, m := range mutate {
		m(&opts)
	}
	return harness.StartManager(t, cp, func(mgr ctrl.Manager) error {
		metrics.Watch(mgr.GetCache()) // as cmd/alm does
		events, err := loops.NewEvents(mgr)
		if err != nil {
			return err
		}
		opts.Events = events
		for _, l := range selected {
			if err := l.Setup(mgr, opts); err != nil {
				return err
			}
		}
		return nil
	})
}

// CatalogSource creates a ConfigMap CatalogSource named name in namespace.
func CatalogSource(t *testing.T, c client.Client, namespace, name string) {
	t.Helper()
	cs := &operatorsv1alpha1.CatalogSource{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       operatorsv1alpha1.CatalogSourceSpec{DisplayName: "test catalog", ConfigMap: &operatorsv1alpha1.ConfigMapSource{}},
	}
	if err := c.Create(t.Context(), cs); err != nil {
		t.Fatal(err)
	}
}

// AppType creates the AppType of pkg in namespace, changed by mutate.
func AppType(t *testing.T, c client.Client, namespace, pkg string, mutate ...func(*operatorsv1alpha1.AppType)) *operatorsv1alpha1.AppType {
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

// WaitAppType waits until the AppType passes check, and returns it.
func WaitAppType(t *testing.T, c client.Client, namespace, name string, timeout time.Duration, check func(*operatorsv1alpha1.AppType) error) *operatorsv1alpha1.AppType {
	t.Helper()
	at := &operatorsv1alpha1.AppType{}
	harness.Eventually(t, timeout, func() error {
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: name}, at); err != nil {
			return err
		}
		return check(at)
	})
	return at
}

// Installed is a WaitAppType check: the AppType has installed version and is Ready.
func Installed(version string) func(*operatorsv1alpha1.AppType) error {
	return func(at *operatorsv1alpha1.AppType) error {
		ready := apimeta.IsStatusConditionTrue(at.Status.Conditions, operatorsv1alpha1.ConditionReady)
		if at.Status.InstalledVersion != version || !ready {
			return fmt.Errorf("AppType %s: installed %q ready %v (%v), want %s ready", at.Name, at.Status.InstalledVersion, ready, at.Status.Conditions, version)
		}
		return nil
	}
}

// WaitOV waits up to a minute until OperatorVersion ns/name passes check, and returns it.
func WaitOV(t *testing.T, c client.Client, ns, name string, check func(*operatorsv1alpha1.OperatorVersion) error) *operatorsv1alpha1.OperatorVersion {
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
