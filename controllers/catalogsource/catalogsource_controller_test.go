package catalogsource_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/index"
	"github.com/almproject/alm/controllers/catalogsource"
	"github.com/almproject/alm/controllers/loops"
	"github.com/almproject/alm/controllers/registry"
	"github.com/almproject/alm/test/harness"
	"github.com/almproject/alm/test/localkube"
)

var cp *localkube.Cluster

func TestMain(m *testing.M) {
	if catalogsource.BenchOnly() {
		os.Exit(m.Run()) // the benchmarks and their child processes need no API server
	}
	os.Exit(localkube.RunTests(m, localkube.Options{
		CRDDirectoryPaths:   []string{filepath.Join("..", "..", "config", "crd", "bases")},
		NoControllerManager: true,
	}, &cp))
}

func start(t *testing.T) (client.Client, *registry.Registry) {
	t.Helper()
	reg := registry.New()
	// ALM's own cache and client options (cmd/alm): a loop that read through them what they do not hold (an
	// unlabelled ConfigMap, a Secret) would fail here as it would in ALM.
	harness.StartManager(t, cp, func(mgr ctrl.Manager) error {
		return (&catalogsource.Reconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Registry: reg, Resync: time.Second,
			Directories: catalogsource.DirectoryPolicy{Namespace: "alm-system", Root: testdata(t)}}).SetupWithManager(mgr)
	}, func(o *ctrl.Options) { o.Cache, o.Client = loops.CacheOptions(), loops.ClientOptions() })
	return harness.Client(t, cp), reg
}

func waitStatus(t *testing.T, c client.Client, key client.ObjectKey, check func(*operatorsv1alpha1.CatalogSource) error) *operatorsv1alpha1.CatalogSource {
	t.Helper()
	cs := &operatorsv1alpha1.CatalogSource{}
	harness.Eventually(t, 30*time.Second, func() error {
		if err := c.Get(context.Background(), key, cs); err != nil {
			return err
		}
		return check(cs)
	})
	return cs
}

func counts(packages, bundles, rejected int32) func(*operatorsv1alpha1.CatalogSource) error {
	return func(cs *operatorsv1alpha1.CatalogSource) error {
		st := cs.Status
		if st.PackageCount != packages || st.BundleCount != bundles || st.RejectedCount != rejected || !apimeta.IsStatusConditionTrue(st.Conditions, operatorsv1alpha1.ConditionReady) {
			return fmt.Errorf("status: %d packages, %d bundles, %d rejected, conditions %v; want %d, %d, %d and Ready",
				st.PackageCount, st.BundleCount, st.RejectedCount, st.Conditions, packages, bundles, rejected)
		}
		return nil
	}
}

// A ConfigMap catalog follows its ConfigMaps as they are published, broken or removed; a broken bundle degrades only
// itself.
func TestConfigMapCatalogFollowsItsConfigMaps(t *testing.T) {
	c, reg := start(t)
	ns := harness.Namespace(t, c, "catsrc-cm")
	key := client.ObjectKey{Namespace: ns, Name: "ops"}
	if err := c.Create(t.Context(), &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ops"},
		Spec: operatorsv1alpha1.CatalogSourceSpec{ConfigMap: &operatorsv1alpha1.ConfigMapSource{}}}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, c, key, counts(0, 0, 0))

	bundles := t.TempDir()
	harness.Publish(t, c, harness.WriteBundle(t, bundles, harness.Demo{Package: "cm", Name: "cm.v1.0.0", Version: "1.0.0"}), "ops", ns)
	harness.Publish(t, c, harness.WriteBundle(t, bundles, harness.Demo{Package: "cm", Name: "cm.v1.1.0", Version: "1.1.0", Replaces: "cm.v1.0.0"}), "ops", ns)
	cs := waitStatus(t, c, key, counts(1, 2, 0))
	if p := cs.Status.Packages; len(p) != 1 || p[0].Name != "cm" || p[0].LatestVersion != "1.1.0" || p[0].DefaultChannel != "stable" {
		t.Errorf("packages = %+v, want cm at 1.1.0 on stable", p)
	}
	if res, err := reg.Index().Resolve(catalogRequest(ns)); err != nil || res.Chosen == nil || res.Chosen.Name != "cm.v1.1.0" {
		t.Errorf("the registry resolves cm to %v (err %v), want cm.v1.1.0", res.Chosen, err)
	}

	// A broken bundle: it is reported with the ConfigMap and rule, and the rest keeps serving.
	broken := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ops-broken", Labels: map[string]string{operatorsv1alpha1.LabelCatalog: "ops"}},
		BinaryData: map[string][]byte{"bundle.tar.gz": []byte("not a gzip stream")},
	}
	if err := c.Create(t.Context(), broken); err != nil {
		t.Fatal(err)
	}
	cs = waitStatus(t, c, key, counts(1, 2, 1))
	if r := cs.Status.RejectedBundles; len(r) != 1 || !strings.Contains(r[0].File, "ops-broken") || r[0].Rule == "" || r[0].Message == "" {
		t.Errorf("rejectedBundles = %+v, want the broken ConfigMap with a rule and a message", r)
	}
	if !apimeta.IsStatusConditionTrue(cs.Status.Conditions, operatorsv1alpha1.ConditionDegraded) {
		t.Errorf("Degraded is not True with a rejected bundle: %v", cs.Status.Conditions)
	}
	if res, err := reg.Index().Resolve(catalogRequest(ns)); err != nil || res.Chosen == nil || res.Chosen.Name != "cm.v1.1.0" {
		t.Errorf("with a broken bundle beside it, cm resolves to %v (err %v), want cm.v1.1.0", res.Chosen, err)
	}

	// Removing ConfigMaps removes their bundles.
	if err := c.Delete(t.Context(), broken); err != nil {
		t.Fatal(err)
	}
	list := &corev1.ConfigMapList{}
	if err := c.List(t.Context(), list, client.InNamespace(ns), client.MatchingLabels{operatorsv1alpha1.LabelCatalog: "ops"}); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		if strings.Contains(list.Items[i].Name, "v1.1.0") {
			if err := c.Delete(t.Context(), &list.Items[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitStatus(t, c, key, counts(1, 1, 0))
}

// testdata is catalog/testdata, the directory the tests' CatalogSources of every namespace may serve.
func testdata(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "catalog", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDirectoryCatalog: a directory under the root the admin opened is served in any namespace; a missing one is a
// source error naming the path; one outside the root is refused and serves nothing.
func TestDirectoryCatalog(t *testing.T) {
	c, reg := start(t)
	ns := harness.Namespace(t, c, "catsrc-dir")
	root := testdata(t)
	for name, path := range map[string]string{"etcd": filepath.Join(root, "etcd"), "missing": filepath.Join(root, "nonexistent"), "outside": "/"} {
		if err := c.Create(t.Context(), &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: operatorsv1alpha1.CatalogSourceSpec{Directory: &operatorsv1alpha1.DirectorySource{Path: path}}}); err != nil {
			t.Fatal(err)
		}
	}
	waitStatus(t, c, client.ObjectKey{Namespace: ns, Name: "etcd"}, counts(1, 2, 0))
	for name, want := range map[string][]string{
		"missing": {operatorsv1alpha1.ReasonSourceError, filepath.Join(root, "nonexistent")},
		"outside": {operatorsv1alpha1.ReasonDirectoryRefused, "spec.directory.path / is not under " + root, "--directory-catalog-root"},
	} {
		waitStatus(t, c, client.ObjectKey{Namespace: ns, Name: name}, func(cs *operatorsv1alpha1.CatalogSource) error {
			cond := apimeta.FindStatusCondition(cs.Status.Conditions, operatorsv1alpha1.ConditionReady)
			if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != want[0] {
				return fmt.Errorf("Ready condition %+v, want False %s", cond, want[0])
			}
			for _, s := range want[1:] {
				if !strings.Contains(cond.Message, s) {
					return fmt.Errorf("Ready message %q does not say %q", cond.Message, s)
				}
			}
			return nil
		})
	}
	if _, served := reg.Digest(client.ObjectKey{Namespace: ns, Name: "outside"}); served {
		t.Error("the refused CatalogSource outside is in the registry")
	}
	// A served source whose path changes to one it may not read stops serving what it loaded.
	key := client.ObjectKey{Namespace: ns, Name: "etcd"}
	cs := &operatorsv1alpha1.CatalogSource{}
	if err := c.Get(t.Context(), key, cs); err != nil {
		t.Fatal(err)
	}
	cs.Spec.Directory.Path = "/"
	if err := c.Update(t.Context(), cs); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, c, key, func(cs *operatorsv1alpha1.CatalogSource) error {
		cond := apimeta.FindStatusCondition(cs.Status.Conditions, operatorsv1alpha1.ConditionReady)
		if cond == nil || cond.Reason != operatorsv1alpha1.ReasonDirectoryRefused || cs.Status.BundleCount != 0 {
			return fmt.Errorf("Ready %+v, %d bundles; want DirectoryRefused and none", cond, cs.Status.BundleCount)
		}
		return nil
	})
	if _, served := reg.Digest(key); served {
		t.Error("CatalogSource etcd, refused after its path changed, is still in the registry")
	}
}

func catalogRequest(ns string) index.Request {
	return index.Request{Package: "cm", Catalogs: []string{ns + "/ops"}}
}
