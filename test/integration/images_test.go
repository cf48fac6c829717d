package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/test/harness"
	"github.com/almproject/alm/test/opm"
)

// imageCatalog creates an image CatalogSource for a tag of r, polled every 5 s (the floor on loopback), and deletes it
// when the test ends: r's port is given to later tests' registries, which it must not poll.
func imageCatalog(t *testing.T, c client.Client, r *harness.Registry, namespace, name, ref string) {
	t.Helper()
	cs := &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: operatorsv1alpha1.CatalogSourceSpec{Image: &operatorsv1alpha1.ImageSource{Ref: r.Ref(ref), Insecure: true,
			PollInterval: &metav1.Duration{Duration: 5 * time.Second}}}}
	if err := c.Create(t.Context(), cs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Delete(context.Background(), cs); client.IgnoreNotFound(err) != nil {
			t.Error(err)
		}
	})
}

// verifiedFrom checks that an installed OperatorVersion names its bundle image by digest and reports it verified.
func verifiedFrom(t *testing.T, c client.Client, namespace, name, repo string) {
	t.Helper()
	ov := &operatorsv1alpha1.OperatorVersion{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: name}, ov); err != nil {
		t.Fatal(err)
	}
	b := ov.Spec.Bundle
	if b == nil || !strings.HasPrefix(b.Image, repo+"@sha256:") || !strings.HasSuffix(b.Image, "@"+b.Digest) || ov.Spec.Install.StrategyName != "" {
		t.Errorf("%s: spec.bundle %+v, install strategy %q; want the bundle image %s by digest and no strategy in spec", name, b, ov.Spec.Install.StrategyName, repo)
	}
	if cond := apimeta.FindStatusCondition(ov.Status.Conditions, operatorsv1alpha1.ConditionBundleVerified); cond == nil || cond.Status != metav1.ConditionTrue || !strings.Contains(cond.Message, b.Digest) {
		t.Errorf("%s: BundleVerified = %+v, want True naming %s", name, cond, b.Digest)
	}
}

// The third workflow through images, as a real cluster runs it: a catalog image whose bundles exist only as bundle
// images is served by an image CatalogSource, an AppType installs from it, and the next catalog image on the same tag,
// carrying a version that replaces the installed one, upgrades it on the next poll.
func TestImageCatalogInstallsAndUpgrades(t *testing.T) {
	c := harness.Client(t, cp)
	harness.RunKubelet(t, c, nil)
	startALM(t, "all")
	ns := harness.Namespace(t, c, "images")
	r := harness.NewRegistry(t)
	dir := t.TempDir()
	harness.WriteBundle(t, dir, harness.Demo{Package: "imgop", Name: "imgop.v1.0.0", Version: "1.0.0"})
	r.PushCatalog(t, map[string][]byte{"imgop/catalog.json": r.ImageCatalog(t, dir)}, "catalogs/ops:latest")
	imageCatalog(t, c, r, ns, "ops", "catalogs/ops:latest")

	appType(t, c, ns, "imgop")
	waitAppType(t, c, ns, "imgop", 90*time.Second, installed("1.0.0"))
	verifiedFrom(t, c, ns, "imgop.v1.0.0", r.Ref("bundles/imgop"))

	harness.WriteBundle(t, dir, harness.Demo{Package: "imgop", Name: "imgop.v1.1.0", Version: "1.1.0", Replaces: "imgop.v1.0.0"})
	r.PushCatalog(t, map[string][]byte{"imgop/catalog.json": r.ImageCatalog(t, dir)}, "catalogs/ops:latest")
	waitAppType(t, c, ns, "imgop", 90*time.Second, installed("1.1.0"))
	verifiedFrom(t, c, ns, "imgop.v1.1.0", r.Ref("bundles/imgop"))
	harness.WaitGone(t, c, &operatorsv1alpha1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "imgop.v1.0.0"}}, 90*time.Second)
}

// A catalog written by real opm from bundle images (its basic template, manifests migrated to olm.csv.metadata)
// installs as it is.
func TestOpmCatalogInstalls(t *testing.T) {
	c := harness.Client(t, cp)
	harness.RunKubelet(t, c, nil)
	startALM(t, "all")
	ns := harness.Namespace(t, c, "opm-catalog")
	r := harness.NewRegistry(t)
	ref := r.PushBundleByDigest(t, harness.WriteBundle(t, t.TempDir(), harness.Demo{Package: "opmop", Name: "opmop.v1.0.0", Version: "1.0.0"}), "bundles/opmop", "1.0.0")
	template := fmt.Sprintf(`schema: olm.template.basic
entries:
- {schema: olm.package, name: opmop, defaultChannel: stable}
- {schema: olm.channel, package: opmop, name: stable, entries: [{name: opmop.v1.0.0}]}
- {schema: olm.bundle, image: %s}
`, ref)
	path := filepath.Join(t.TempDir(), "template.yaml")
	if err := os.WriteFile(path, []byte(template), 0o644); err != nil {
		t.Fatal(err)
	}
	rendered, err := opm.Run(t, "alpha", "render-template", "basic", path, "--use-http", "--migrate-level", "bundle-object-to-csv-metadata", "-o", "json")
	if err != nil {
		t.Fatalf("opm: %v\n%s", err, rendered)
	}
	r.PushCatalog(t, map[string][]byte{"opmop/catalog.json": rendered}, "catalogs/opm:v1")
	imageCatalog(t, c, r, ns, "opm", "catalogs/opm:v1")
	appType(t, c, ns, "opmop")
	waitAppType(t, c, ns, "opmop", 90*time.Second, installed("1.0.0"))
	verifiedFrom(t, c, ns, "opmop.v1.0.0", r.Ref("bundles/opmop"))
}

// Two packages of one catalog own the same CRD (real catalogs have such pairs): the catalog serves both, the first
// one installed owns the CRD, and only installing the second fails, naming the package that owns it.
func TestCRDOwnedByTwoPackages(t *testing.T) {
	c := harness.Client(t, cp)
	harness.RunKubelet(t, c, nil)
	startALM(t, "all")
	ns := harness.Namespace(t, c, "crd-twice")
	catalogSource(t, c, ns, "ops")
	group := strings.TrimPrefix(ns, "crd-twice-") + ".backup.example.com" // cluster-scoped: one per test run
	dir := t.TempDir()
	for _, pkg := range []string{"vbackup", "obackup"} {
		harness.Publish(t, c, harness.WriteBundle(t, dir, harness.Demo{Package: pkg, Name: pkg + ".v1.0.0", Version: "1.0.0", CRDGroup: group}), "ops", ns)
	}
	cs := &operatorsv1alpha1.CatalogSource{}
	harness.Eventually(t, 30*time.Second, func() error {
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "ops"}, cs); err != nil {
			return err
		}
		if cs.Status.PackageCount != 2 || cs.Status.BundleCount != 2 || cs.Status.RejectedCount != 0 {
			return fmt.Errorf("catalog serves %d packages, %d bundles, %d rejected; want 2, 2, 0", cs.Status.PackageCount, cs.Status.BundleCount, cs.Status.RejectedCount)
		}
		return nil
	})
	appType(t, c, ns, "vbackup")
	waitAppType(t, c, ns, "vbackup", 60*time.Second, installed("1.0.0"))
	appType(t, c, ns, "obackup")
	ov := harness.WaitPhase(t, c, ns, "obackup.v1.0.0", operatorsv1alpha1.PhaseFailed, 60*time.Second)
	if !strings.Contains(ov.Status.Message, "widgets."+group) || !strings.Contains(ov.Status.Message, "belongs to package vbackup") {
		t.Errorf("obackup.v1.0.0 failed with %s: %q; want the CRD widgets.%s named as belonging to package vbackup", ov.Status.Reason, ov.Status.Message, group)
	}
	waitAppType(t, c, ns, "vbackup", 10*time.Second, installed("1.0.0"))
}
