package localenv

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/blang/semver/v4"

	"github.com/almproject/alm/catalog/fbc"
	"github.com/almproject/alm/catalog/image"
	"github.com/almproject/alm/catalog/index"
	"github.com/almproject/alm/test/localkube"
)

// TestPublishPushesBundleAndCatalogImages publishes two versions of the Konnect operator to a registry and reads the
// catalog tag back as ALM's image CatalogSource does: each publish moves the one tag to a catalog that holds every
// bundle published so far, each naming its bundle image by digest, with the upgrade edge between them.
func TestPublishPushesBundleAndCatalogImages(t *testing.T) {
	root, err := localkube.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	reg, err := StartRegistry("127.0.0.1", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	p := &Publisher{Registry: reg.Host, CA: reg.CAPEM, Dir: t.TempDir()}
	client, err := image.NewClient(image.Options{CABundle: reg.CAPEM})
	if err != nil {
		t.Fatal(err)
	}
	var digests []string
	for _, version := range []string{"1.0.0", "1.1.0"} {
		pub, err := p.Publish(t.Context(), filepath.Join(root, "bundles", Package, version))
		if err != nil {
			t.Fatal(err)
		}
		if want := reg.Host + "/bundles/" + Package + ":" + version; pub.BundleTag != want {
			t.Errorf("bundle tag %s, want %s", pub.BundleTag, want)
		}
		tagged, err := client.Digest(t.Context(), pub.BundleTag)
		if err != nil || pub.BundleImage != reg.Host+"/bundles/"+Package+"@"+tagged {
			t.Errorf("bundle image %s, the tag points at %s (%v)", pub.BundleImage, tagged, err)
		}
		current, err := client.Digest(t.Context(), p.CatalogRef())
		if err != nil || current != pub.CatalogDigest {
			t.Fatalf("the catalog tag points at %s (%v), the publish pushed %s", current, err, pub.CatalogDigest)
		}
		digests = append(digests, pub.CatalogDigest)
		checkCatalog(t, client, p, pub)
	}
	if digests[0] == digests[1] {
		t.Errorf("publishing 1.1.0 left the catalog at %s", digests[0])
	}
	if n := reg.ManifestRequests(CatalogRepository); n == 0 {
		t.Errorf("the registry counted no manifest request of %s", CatalogRepository)
	}
}

// checkCatalog pulls the catalog image by digest and checks that it serves pub's bundle from its bundle image, with
// the manifests in the catalog only when CatalogWithObjects.
func checkCatalog(t *testing.T, client *image.Client, p *Publisher, pub Published) {
	t.Helper()
	cat, err := client.PullCatalog(t.Context(), p.CatalogRef(), pub.CatalogDigest)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	contents, err := fbc.LoadFS(cat.FS(), "catalog")
	if err != nil {
		t.Fatal(err)
	}
	ix := index.New(index.Catalog{Name: "catalog", Contents: contents})
	b := ix.Bundle(Package, pub.Bundle)
	if b == nil {
		t.Fatalf("the catalog %s does not serve %s: %v", pub.CatalogDigest, pub.Bundle, ix.Problems())
	}
	if b.Image != pub.BundleImage || b.ImageDigest == "" || !strings.HasSuffix(pub.BundleImage, "@"+b.ImageDigest) {
		t.Errorf("%s: image %s (digest %s), want %s", b.Name, b.Image, b.ImageDigest, pub.BundleImage)
	}
	if b.HasManifests() != CatalogWithObjects {
		t.Errorf("%s: manifests in the catalog: %v, want %v (CatalogWithObjects)", b.Name, b.HasManifests(), CatalogWithObjects)
	}
	if b.Metadata == nil || b.Metadata.DisplayName == "" {
		t.Errorf("%s: no olm.csv.metadata: %+v", b.Name, b.Metadata)
	}
	if pub.Bundle == Package+".v1.1.0" {
		if edges := ix.UpgradesFrom(Package, semver.MustParse("1.0.0"), Package+".v1.0.0"); len(edges) == 0 {
			t.Errorf("the catalog has no upgrade edge from %s.v1.0.0 to %s", Package, pub.Bundle)
		}
	}
}

func TestManifestRepository(t *testing.T) {
	for path, want := range map[string]string{
		"/v2/konnect-operator/manifests/1.0.0":           "konnect-operator",
		"/v2/bundles/konnect-operator/manifests/sha256:": "bundles/konnect-operator",
		"/v2/catalogs/alm/blobs/sha256:abc":              "",
		"/v2/":                                           "",
	} {
		if got, _ := manifestRepository(path); got != want {
			t.Errorf("manifestRepository(%q) = %q, want %q", path, got, want)
		}
	}
}
