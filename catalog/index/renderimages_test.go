package index

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"

	"github.com/almproject/alm/catalog/fbc"
)

// etcdImages are bundle image references by digest for the etcd bundles of testdata.
var etcdImages = map[string]string{
	"etcdoperator.v0.9.2": "registry.example/bundles/etcd@sha256:" + strings.Repeat("a", 64),
	"etcdoperator.v0.9.4": "registry.example/bundles/etcd@sha256:" + strings.Repeat("b", 64),
}

func loadEtcdForRender(t *testing.T) *Index {
	t.Helper()
	c, err := fbc.LoadDirWith("../testdata/etcd", fbc.LoadOptions{ForRender: true})
	if err != nil {
		t.Fatal(err)
	}
	return New(Catalog{Name: "etcd", Contents: c})
}

// propertyTypes counts a bundle's properties by type.
func propertyTypes(b declcfg.Bundle) map[string]int {
	n := map[string]int{}
	for _, p := range b.Properties {
		n[p.Type]++
	}
	return n
}

// TestRenderWithImages renders bundle directories as opm renders bundle images: each olm.bundle names its image by
// digest and has olm.csv.metadata from its CSV; olm.bundle.object only when objects are kept. operator-registry
// reads the result, and WriteCatalogWith writes exactly fbc.Write(DeclarativeConfigWith).
func TestRenderWithImages(t *testing.T) {
	ix := loadEtcdForRender(t)
	for _, omit := range []bool{true, false} {
		opts := RenderOptions{Images: etcdImages, OmitObjects: omit}
		cfg, err := ix.DeclarativeConfigWith("", opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(cfg.Bundles) != 2 {
			t.Fatalf("bundles: %d", len(cfg.Bundles))
		}
		for _, b := range cfg.Bundles {
			n := propertyTypes(b)
			if b.Image != etcdImages[b.Name] {
				t.Errorf("bundle %s: image %q, want %q", b.Name, b.Image, etcdImages[b.Name])
			}
			if n[property.TypeCSVMetadata] != 1 || n[property.TypePackage] != 1 || n[property.TypeGVK] == 0 {
				t.Errorf("bundle %s (omit %v): properties %v", b.Name, omit, n)
			}
			if (n[property.TypeBundleObject] == 0) != omit {
				t.Errorf("bundle %s (omit %v): %d olm.bundle.object properties", b.Name, omit, n[property.TypeBundleObject])
			}
			props, err := property.Parse(b.Properties)
			if err != nil || len(props.CSVMetadatas) != 1 || props.CSVMetadatas[0].DisplayName != "etcd" {
				t.Errorf("bundle %s: olm.csv.metadata %+v, %v", b.Name, props.CSVMetadatas, err)
			}
		}
		if _, err := declcfg.ConvertToModel(*cfg); err != nil {
			t.Errorf("operator-registry rejects the catalog (omit %v): %v", omit, err)
		}
		for _, format := range []string{"json", "yaml"} {
			var want, got bytes.Buffer
			if err := fbc.Write(cfg, format, &want); err != nil {
				t.Fatal(err)
			}
			if err := ix.WriteCatalogWith("", format, &got, opts); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(want.Bytes(), got.Bytes()) {
				t.Errorf("omit %v, %s: WriteCatalogWith differs from fbc.Write(DeclarativeConfigWith)", omit, format)
			}
		}
	}
}

// TestRenderImageCatalogRoundTrips: a catalog rendered with images, loaded back for rendering and rendered again
// with no options, is the same documents (images, olm.csv.metadata and channel entries kept).
func TestRenderImageCatalogRoundTrips(t *testing.T) {
	for _, omit := range []bool{true, false} {
		var first bytes.Buffer
		if err := loadEtcdForRender(t).WriteCatalogWith("", "json", &first, RenderOptions{Images: etcdImages, OmitObjects: omit}); err != nil {
			t.Fatal(err)
		}
		back := New(Catalog{Name: "img", Contents: fbc.LoadWith(bytes.NewReader(first.Bytes()), "catalog.json", fbc.LoadOptions{ForRender: true})})
		if len(back.Problems()) != 0 {
			t.Fatalf("problems: %v", back.Problems())
		}
		var second bytes.Buffer
		if err := back.WriteCatalogWith("", "json", &second, RenderOptions{OmitObjects: omit}); err != nil {
			t.Fatal(err)
		}
		if a, b := documents(t, first.Bytes()), documents(t, second.Bytes()); !reflect.DeepEqual(a, b) {
			t.Errorf("omit %v: rendered again differs:\n%s\n---\n%s", omit, first.String(), second.String())
		}
	}
}

// TestRenderOmitObjectsNeedsImages: leaving out the objects of a bundle that has no image would make it
// uninstallable; the render refuses, naming the bundle.
func TestRenderOmitObjectsNeedsImages(t *testing.T) {
	ix := loadEtcdForRender(t)
	images := map[string]string{"etcdoperator.v0.9.4": etcdImages["etcdoperator.v0.9.4"]}
	_, err := ix.DeclarativeConfigWith("", RenderOptions{Images: images, OmitObjects: true})
	if err == nil || !strings.Contains(err.Error(), "bundle etcdoperator.v0.9.2") || !strings.Contains(err.Error(), "no bundle image") {
		t.Errorf("err = %v, want a refusal naming etcdoperator.v0.9.2", err)
	}
}

// documents decodes a JSON stream into generic documents.
func documents(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	for dec.More() {
		var d map[string]any
		if err := dec.Decode(&d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}
