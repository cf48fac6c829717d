package attack

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/loops"
	"github.com/almproject/alm/test/harness"
)

// catalogRules let a tenant manage CatalogSources and AppTypes in its own namespace and read its OperatorVersions:
// what a namespace admin does.
var catalogRules = []rbacv1.PolicyRule{{APIGroups: []string{operatorsv1alpha1.GroupVersion.Group},
	Resources: []string{"catalogsources", "apptypes"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{operatorsv1alpha1.GroupVersion.Group}, Resources: []string{"operatorversions"}, Verbs: []string{"get", "list", "watch"}}}

// checkoutBundles is this checkout's bundles/ (2 packages, 8 bundles), by absolute path.
func checkoutBundles(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "bundles"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// directorySource creates a directory CatalogSource ns/name at path with c.
func directorySource(t *testing.T, c client.Client, ns, name, path string) *operatorsv1alpha1.CatalogSource {
	t.Helper()
	cs := &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: operatorsv1alpha1.CatalogSourceSpec{Directory: &operatorsv1alpha1.DirectorySource{Path: path}}}
	if err := c.Create(t.Context(), cs); err != nil {
		t.Fatalf("creating CatalogSource %s/%s at %s: %v", ns, name, path, err)
	}
	return cs
}

// waitCatalogReady waits until CatalogSource ns/name reports Ready with the reason and a message holding each of
// msg, and returns it.
func waitCatalogReady(t *testing.T, c client.Client, ns, name string, status metav1.ConditionStatus, reason string, msg ...string) *operatorsv1alpha1.CatalogSource {
	t.Helper()
	cs := &operatorsv1alpha1.CatalogSource{}
	harness.Eventually(t, 30*time.Second, func() error {
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, cs); err != nil {
			return err
		}
		ready := apimeta.FindStatusCondition(cs.Status.Conditions, operatorsv1alpha1.ConditionReady)
		if ready == nil || ready.Status != status || ready.Reason != reason {
			return fmt.Errorf("CatalogSource %s/%s: Ready %+v, want %s %s", ns, name, ready, status, reason)
		}
		for _, m := range msg {
			if !strings.Contains(ready.Message, m) {
				return fmt.Errorf("CatalogSource %s/%s: Ready message %q does not say %q", ns, name, ready.Message, m)
			}
		}
		return nil
	})
	return cs
}

// servesNothing fails when a refused CatalogSource reports anything served.
func servesNothing(t *testing.T, cs *operatorsv1alpha1.CatalogSource) {
	t.Helper()
	if cs.Status.PackageCount != 0 || cs.Status.BundleCount != 0 || len(cs.Status.Packages) != 0 {
		t.Errorf("refused CatalogSource %s/%s serves %d packages, %d bundles (%v), want nothing", cs.Namespace, cs.Name,
			cs.Status.PackageCount, cs.Status.BundleCount, cs.Status.Packages)
	}
}

// unresolvable creates an AppType for pkg in ns with c and waits until it reports that no catalog has the package.
func unresolvable(t *testing.T, c client.Client, ns, pkg string) {
	t.Helper()
	at := &operatorsv1alpha1.AppType{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pkg}, Spec: operatorsv1alpha1.AppTypeSpec{Package: pkg}}
	if err := c.Create(t.Context(), at); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, func() error {
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(at), at); err != nil {
			return err
		}
		cond := apimeta.FindStatusCondition(at.Status.Conditions, operatorsv1alpha1.ConditionResolved)
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != operatorsv1alpha1.ReasonPackageNotFound {
			return fmt.Errorf("AppType %s/%s: Resolved %+v, want False %s", ns, pkg, cond, operatorsv1alpha1.ReasonPackageNotFound)
		}
		return nil
	})
	list := &operatorsv1alpha1.OperatorVersionList{}
	if err := c.List(t.Context(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) > 0 {
		t.Errorf("%d OperatorVersions in %s, want none: nothing may resolve from a refused directory", len(list.Items), ns)
	}
}

// TestAttackDirectoryCatalogReadsALMFilesystem: a tenant points directory CatalogSources at ALM's filesystem — `/`,
// this checkout's bundles/, ALM's bundle cache (bundles pulled with other catalogs' credentials) and a symlink in a
// directory of its own that leads out. Guard: DirectoryPolicy.Check (controllers/catalogsource/directory.go) — with
// no --directory-catalog-root only ALM's namespace may serve a directory, and no namespace the bundle cache. Each
// source is Ready=False DirectoryRefused naming spec.directory.path and the rule, serves nothing, and an AppType in
// the tenant's namespace cannot resolve from it; the same checkout directory in ALM's namespace (admins only) is
// served, the bundle cache is refused there too.
func TestAttackDirectoryCatalogReadsALMFilesystem(t *testing.T) {
	var cacheDir string
	startALM(t, func(o *loops.Options) { cacheDir = o.Bundles.Cache.Dir })
	// Another tenant's private bundle, as the cache holds it after a pull with that tenant's credentials.
	harness.WriteBundle(t, filepath.Join(cacheDir, "sha256-"+strings.Repeat("ab", 32)), harness.Demo{Package: "private", Name: "private.v1.0.0", Version: "1.0.0"})
	link := filepath.Join(t.TempDir(), "bundles")
	if err := os.Symlink(checkoutBundles(t), link); err != nil {
		t.Fatal(err)
	}
	ns, as := tenant(t, "dircat", catalogRules, nil)
	for name, path := range map[string]string{"root": "/", "checkout": checkoutBundles(t), "cache": cacheDir, "link": link} {
		directorySource(t, as, ns, name, path)
	}
	for name, path := range map[string]string{"root": "/", "checkout": checkoutBundles(t), "cache": cacheDir, "link": link} {
		cs := waitCatalogReady(t, as, ns, name, metav1.ConditionFalse, operatorsv1alpha1.ReasonDirectoryRefused,
			"spec.directory.path "+path, "ALM's namespace "+almNamespace, "--directory-catalog-root, which is not set", "almctl publish")
		servesNothing(t, cs)
	}
	unresolvable(t, as, ns, "konnect-operator")
	unresolvable(t, as, ns, "private")

	// The tenant cannot move the source into ALM's namespace: RBAC keeps it to the cluster admins.
	err := as.Create(t.Context(), &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: almNamespace, Name: "tenant-" + ns},
		Spec: operatorsv1alpha1.CatalogSourceSpec{Directory: &operatorsv1alpha1.DirectorySource{Path: "/"}}})
	if !apierrors.IsForbidden(err) {
		t.Errorf("tenant creating a CatalogSource in %s: %v, want Forbidden", almNamespace, err)
	}

	admin := harness.Client(t, cp)
	name := "dir-" + ns
	for _, src := range []struct{ name, path string }{{name, checkoutBundles(t)}, {name + "-cache", cacheDir}} {
		cs := directorySource(t, admin, almNamespace, src.name, src.path)
		t.Cleanup(func() { // ALM's namespace serves every namespace: the next test must not resolve from it
			if err := admin.Delete(context.Background(), cs); err != nil {
				t.Error(err)
			}
		})
	}
	// bundles/<package>/<version>: every version the checkout publishes.
	versions, err := filepath.Glob(filepath.Join(checkoutBundles(t), "*", "*", "manifests"))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("serving %d bundles of 2 packages", len(versions))
	cs := waitCatalogReady(t, admin, almNamespace, name, metav1.ConditionTrue, operatorsv1alpha1.ReasonSynced, want)
	if cs.Status.PackageCount != 2 || int(cs.Status.BundleCount) != len(versions) {
		t.Errorf("CatalogSource %s/%s: %d packages, %d bundles; want bundles/'s 2 and %d", almNamespace, name, cs.Status.PackageCount, cs.Status.BundleCount, len(versions))
	}
	servesNothing(t, waitCatalogReady(t, admin, almNamespace, name+"-cache", metav1.ConditionFalse, operatorsv1alpha1.ReasonDirectoryRefused,
		"spec.directory.path "+cacheDir, "bundle cache", "--bundle-cache-dir"))
}

// TestAttackDirectoryCatalogOutOfAdminRoot: a cluster admin opened a root to every namespace
// (--directory-catalog-root). A tenant's source under it is served; `/`, a path that climbs out with "..", and a
// symlink under the root that leads to this checkout's bundles/ are refused and serve nothing (guard:
// DirectoryPolicy.Check's root rule, on the path with its symlinks and ".." resolved); so is a directory under the
// root whose catalog file links out of it (guard: the walk, walkDir).
func TestAttackDirectoryCatalogOutOfAdminRoot(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	harness.WriteBundle(t, filepath.Join(root, "team"), harness.Demo{Package: "shared", Name: "shared.v1.0.0", Version: "1.0.0"})
	if err := os.Symlink(checkoutBundles(t), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	// A directory under the root whose catalog file is a link to one outside it (another team's, say).
	outside := filepath.Join(t.TempDir(), "catalog.yaml")
	if err := os.WriteFile(outside, []byte("schema: olm.package\nname: outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "escape"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "escape", "catalog.yaml")); err != nil {
		t.Fatal(err)
	}
	startALM(t, func(o *loops.Options) { o.DirectoryCatalogRoot = root })
	ns, as := tenant(t, "dirroot", catalogRules, nil)
	directorySource(t, as, ns, "team", filepath.Join(root, "team"))
	cs := waitCatalogReady(t, as, ns, "team", metav1.ConditionTrue, operatorsv1alpha1.ReasonSynced, "serving 1 bundles of 1 packages")
	if cs.Status.BundleCount != 1 {
		t.Errorf("CatalogSource team: %d bundles, want 1", cs.Status.BundleCount)
	}
	for name, path := range map[string]string{"root": "/", "dotdot": root + "/team/../..", "link": filepath.Join(root, "link")} {
		directorySource(t, as, ns, name, path)
		servesNothing(t, waitCatalogReady(t, as, ns, name, metav1.ConditionFalse, operatorsv1alpha1.ReasonDirectoryRefused,
			"spec.directory.path "+path, "is not under "+root, "--directory-catalog-root"))
	}
	directorySource(t, as, ns, "escape", filepath.Join(root, "escape"))
	servesNothing(t, waitCatalogReady(t, as, ns, "escape", metav1.ConditionFalse, operatorsv1alpha1.ReasonDirectoryRefused,
		"spec.directory.path "+filepath.Join(root, "escape"), "resolves to "+outside, "ALM does not follow links out"))
	unresolvable(t, as, ns, "konnect-operator")
	unresolvable(t, as, ns, "outside")
}

// TestAttackPlainHTTPRegistryWithoutInsecure: a catalog image on a registry that answers only plain HTTP — what a
// network attacker who strips TLS offers — in ALM's own namespace, whose sources may use loopback, without
// spec.image.insecure. go-containerregistry would fall back to HTTP by itself for a loopback or RFC 1918 registry
// and send the pull credentials there; guard: image.Client's plainHTTPGuard (catalog/image/plainhttp.go). The source
// is Ready=False ImageRefused naming spec.image.insecure, and the registry gets no manifest request; with insecure
// set (loopback only) the same image is served.
func TestAttackPlainHTTPRegistryWithoutInsecure(t *testing.T) {
	startALM(t)
	reg := harness.NewRegistry(t)
	reg.PushCatalog(t, map[string][]byte{"configs/plain/catalog.yaml": []byte("schema: olm.package\nname: plain\n")}, "catalogs/plain:v1")
	// Only this repository's requests count: a source another test left polls whatever registry a recycled
	// loopback port now leads to.
	before := reg.ManifestRequests("catalogs/plain")
	admin := harness.Client(t, cp)
	cs := &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: almNamespace, Name: "plain-http"},
		Spec: operatorsv1alpha1.CatalogSourceSpec{Image: &operatorsv1alpha1.ImageSource{Ref: reg.Ref("catalogs/plain:v1")}}}
	if err := admin.Create(t.Context(), cs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := admin.Delete(context.Background(), cs); err != nil {
			t.Error(err)
		}
	})
	servesNothing(t, waitCatalogReady(t, admin, almNamespace, cs.Name, metav1.ConditionFalse, operatorsv1alpha1.ReasonImageRefused,
		"plain-http", "spec.image.insecure"))
	if after := reg.ManifestRequests("catalogs/plain"); after != before {
		t.Errorf("the plain-HTTP registry got %d manifest requests of catalogs/plain from a source without insecure, want none:\n%s", after-before, reg.Served(0))
	}
	if err := admin.Get(t.Context(), client.ObjectKeyFromObject(cs), cs); err != nil {
		t.Fatal(err)
	}
	cs.Spec.Image.Insecure = true
	if err := admin.Update(t.Context(), cs); err != nil {
		t.Fatal(err)
	}
	waitCatalogReady(t, admin, almNamespace, cs.Name, metav1.ConditionTrue, operatorsv1alpha1.ReasonSynced, "from "+reg.Ref("catalogs/plain@sha256:"))
}
