package main

import (
	"bytes"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/operator-framework/operator-registry/alpha/declcfg"

	"github.com/almproject/alm/test/opm"
)

// TestOpmReadsPushedImages runs the real opm (bin/opm) on what `almctl catalog push bundles` pushed: opm renders the
// catalog image as the same packages, channels and bundles, renders a pushed bundle image as the olm.bundle of that
// bundle, and `opm validate` accepts the catalog it rendered and the one almctl wrote.
func TestOpmReadsPushedImages(t *testing.T) {
	reg := newRegistry(t, nil)
	ref, catalogJSON := pushBundlesCatalog(t, reg, "opm")
	rendered := mustRender(t, ref)
	if got, want := jsonDocuments(t, rendered), jsonDocuments(t, catalogJSON); !reflect.DeepEqual(got, want) {
		t.Errorf("opm renders the catalog image differently:\nopm:\n%s\nalmctl:\n%s", rendered, catalogJSON)
	}
	ours, err := declcfg.LoadReader(bytes.NewReader(catalogJSON))
	if err != nil {
		t.Fatal(err)
	}
	if count, _ := repositoryBundles(t); len(ours.Packages) != 2 || len(ours.Channels) < 3 || len(ours.Bundles) != count {
		t.Fatalf("almctl's catalog: %d packages, %d channels, %d bundles", len(ours.Packages), len(ours.Channels), len(ours.Bundles))
	}

	want := ours.Bundles[len(ours.Bundles)-1]
	out := mustRender(t, want.Image)
	got, err := declcfg.LoadReader(bytes.NewReader(out))
	if err != nil || len(got.Bundles) != 1 {
		t.Fatalf("opm render %s: %v\n%s", want.Image, err, out)
	}
	if b := got.Bundles[0]; b.Name != want.Name || b.Package != want.Package || b.Image != want.Image {
		t.Errorf("opm renders the bundle image as %s/%s %s, want %s/%s %s", b.Package, b.Name, b.Image, want.Package, want.Name, want.Image)
	}

	for name, data := range map[string][]byte{"opm": rendered, "almctl": catalogJSON} {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "catalog.json"), string(data))
		if _, err := opm.Run(t, "validate", dir); err != nil {
			t.Errorf("opm validate of the catalog %s rendered: %v", name, err)
		}
	}
}

// mustRender is opm's rendering of an image.
func mustRender(t *testing.T, ref string) []byte {
	t.Helper()
	out, err := opm.Run(t, "render", "--use-http", "--output=json", ref)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
