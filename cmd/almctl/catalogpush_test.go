package main

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/operator-framework/operator-registry/alpha/property"

	"github.com/almproject/alm/catalog/fbc"
	"github.com/almproject/alm/catalog/index"
)

// readTree returns the regular files under dir by slash path.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCatalogPushBundles pushes the repository's bundles: every bundle image exists under REPO/<package>:<version>
// and the catalog names it by that digest; the catalog image resolves konnect-operator as the directory does, with
// the channels `catalog render bundles` writes; no olm.bundle.object unless --with-objects; and `catalog render
// REF` (and resolve) read the image back.
func TestCatalogPushBundles(t *testing.T) {
	reg := newRegistry(t, nil)
	ref, catalogJSON := pushBundlesCatalog(t, reg, "latest")
	docs := jsonDocuments(t, catalogJSON)
	count, newest := repositoryBundles(t)
	checkBundleImages(t, reg, ofSchema(docs, "olm.bundle"), count)
	for _, b := range ofSchema(docs, "olm.bundle") {
		if n := propertyTypes(b); n[property.TypeBundleObject] != 0 || n[property.TypeCSVMetadata] != 1 || n[property.TypePackage] != 1 {
			t.Errorf("bundle %s: properties %v, want olm.package and olm.csv.metadata, no olm.bundle.object", b["name"], n)
		}
	}

	rendered := jsonDocuments(t, []byte(mustRun(t, nil, "catalog", "render", bundles)))
	for _, schema := range []string{"olm.package", "olm.channel"} {
		if want, got := ofSchema(rendered, schema), ofSchema(docs, schema); !reflect.DeepEqual(want, got) || len(want) == 0 {
			t.Errorf("%s documents differ from `catalog render bundles`:\n%v\n%v", schema, got, want)
		}
	}

	contents, err := fbc.LoadFS(fstest.MapFS{"catalog.json": {Data: catalogJSON}}, ref+":")
	if err != nil {
		t.Fatal(err)
	}
	ix := index.New(index.Catalog{Name: ref, Contents: contents})
	for _, from := range []string{"", "1.0.0", "1.1.0"} {
		res, err := ix.Resolve(index.Request{Package: "konnect-operator", Channel: "stable", From: from})
		if err != nil || res.Chosen == nil || res.Chosen.Version.String() != newest {
			t.Errorf("resolve from %q: %v\n%s\n%v", from, err, res.Explain(), ix.Problems())
		}
	}

	again := jsonDocuments(t, []byte(mustRun(t, noCredentials(t), "catalog", "render", "--insecure", ref)))
	if !reflect.DeepEqual(again, docs) {
		t.Errorf("`catalog render %s` differs from the pushed catalog:\n%s", ref, mustRun(t, noCredentials(t), "catalog", "render", "--insecure", ref))
	}
	tagRef := reg.ref("catalogs/konnect:latest")
	out := mustRun(t, noCredentials(t), "catalog", "resolve", "--insecure", tagRef, "--package", "konnect-operator", "--from", "1.0.0")
	if !strings.Contains(out, "chosen: konnect-operator.v"+newest) {
		t.Errorf("resolve of the image:\n%s", out)
	}
	if out := mustRun(t, noCredentials(t), "catalog", "graph", "--insecure", tagRef, "--package", "konnect-operator"); !strings.Contains(out, "-- replaces -->") {
		t.Errorf("graph of the image:\n%s", out)
	}

	_, withObjects := pushBundlesCatalog(t, reg, "objects", "--with-objects")
	objDocs := jsonDocuments(t, withObjects)
	checkBundleImages(t, reg, ofSchema(objDocs, "olm.bundle"), count)
	for _, b := range ofSchema(objDocs, "olm.bundle") {
		if n := propertyTypes(b); n[property.TypeBundleObject] == 0 || n[property.TypeCSVMetadata] != 1 {
			t.Errorf("bundle %s with --with-objects: properties %v", b["name"], n)
		}
	}
}

// checkBundleImages checks that each olm.bundle names REPO/<package>@sha256:… and that the digest is the one the
// tag REPO/<package>:<version> points at.
func checkBundleImages(t *testing.T, reg *testRegistry, docs []map[string]any, want int) {
	t.Helper()
	if len(docs) != want {
		t.Errorf("%d olm.bundle documents, want %d", len(docs), want)
	}
	c := imageClient(t)
	for _, b := range docs {
		img, _ := b["image"].(string)
		repo, digest := splitDigestRef(t, img)
		pkg, _ := b["package"].(string)
		if repo != reg.ref("bundles/"+pkg) {
			t.Errorf("bundle %s: image %s, want repository %s", b["name"], img, reg.ref("bundles/"+pkg))
		}
		version := strings.TrimPrefix(b["name"].(string), pkg+".v")
		tagged, err := c.Digest(context.Background(), repo+":"+version)
		if err != nil || tagged != digest {
			t.Errorf("bundle %s: %s:%s is %s (%v), the catalog says %s", b["name"], repo, version, tagged, err, digest)
		}
	}
}

// TestCatalogPushFBC pushes a File-Based Catalog file, and a directory of them, unchanged; a catalog that would
// serve nothing is refused before any request, and flags for bundle directories are refused for FBC.
func TestCatalogPushFBC(t *testing.T) {
	reg := newRegistry(t, nil)
	dir := t.TempDir()
	doc := `{"schema":"olm.package","name":"p","defaultChannel":"stable"}
{"schema":"olm.channel","package":"p","name":"stable","entries":[{"name":"p.v1.0.0"},{"name":"p.v1.1.0","replaces":"p.v1.0.0"}]}
{"schema":"olm.bundle","name":"p.v1.0.0","package":"p","image":"registry.example/p@sha256:` + strings.Repeat("1", 64) + `","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}
{"schema":"olm.bundle","name":"p.v1.1.0","package":"p","image":"registry.example/p@sha256:` + strings.Repeat("2", 64) + `","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.1.0"}}]}
`
	file := filepath.Join(dir, "p", "catalog.json")
	writeFile(t, file, doc)
	files := pullFBC(t, mustRun(t, noCredentials(t), "catalog", "push", "--insecure", file, reg.ref("catalogs/p:file")))
	if !reflect.DeepEqual(files, map[string][]byte{"catalog.json": []byte(doc)}) {
		t.Errorf("pushed files: %q", files)
	}
	yamlDoc := "schema: olm.package\nname: q\ndefaultChannel: stable\n"
	writeFile(t, filepath.Join(dir, "q.yaml"), yamlDoc)
	writeFile(t, filepath.Join(dir, "README.md"), "not a catalog file")
	stdout, stderr, code := run(t, noCredentials(t), "catalog", "push", "--insecure", dir, reg.ref("catalogs/p:dir"))
	if code != 0 || !strings.Contains(stderr, "README.md: not a File-Based Catalog file") {
		t.Fatalf("push dir: exit %d\n%s", code, stderr)
	}
	files = pullFBC(t, strings.TrimSpace(stdout))
	if !reflect.DeepEqual(files, map[string][]byte{"p/catalog.json": []byte(doc), "q.yaml": []byte(yamlDoc)}) {
		t.Errorf("pushed files: %q", files)
	}

	badFile := filepath.Join(t.TempDir(), "bad.json")
	writeFile(t, badFile, `{"schema":"olm.bundle","name":"x.v1","package":"x","properties":[{"type":"olm.package","value":{"packageName":"x","version":"v1"}}]}`)
	before := reg.requests()
	for _, tc := range []struct {
		args   []string
		stderr string
	}{
		{[]string{badFile}, "would serve no bundle"},
		{[]string{bad + "/invalid-semver/bad", "--bundle-repo", reg.ref("bundles")}, "invalid-semver"},
		{[]string{file, "--bundle-repo", reg.ref("bundles")}, "--bundle-repo and --with-objects apply to a directory of bundle directories"},
		{[]string{bundles}, "give --bundle-repo REPO"},
	} {
		args := append([]string{"catalog", "push", "--insecure", tc.args[0], reg.ref("catalogs/refused:1")}, tc.args[1:]...)
		stdout, stderr, code := run(t, noCredentials(t), args...)
		if code != 1 || stdout != "" || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("%v: exit %d, want 1 and %q\nstdout:\n%s\nstderr:\n%s", tc.args, code, tc.stderr, stdout, stderr)
		}
	}
	if n := reg.requests() - before; n != 0 {
		t.Errorf("refused pushes made %d requests", n)
	}
}

// TestCatalogArgument: a catalog argument that is neither a path nor an image reference with a registry host is an
// error that says what to give, with no registry asked.
func TestCatalogArgument(t *testing.T) {
	_, stderr, code := run(t, noCredentials(t), "catalog", "render", "no-such-catalog")
	if code != 1 || !strings.Contains(stderr, "give a catalog directory, a File-Based Catalog file or a catalog image reference") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
