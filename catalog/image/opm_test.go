package image

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

// opm is the pinned opm binary (hack/tools builds it into bin/); the interop tests skip without it.
func opm(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "bin", "opm"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no %s (make tools builds it)", p)
	}
	return p
}

// render runs opm render on a loopback image and returns the FBC objects it printed.
func render(t *testing.T, opmBin, ref string) []map[string]any {
	t.Helper()
	home := t.TempDir()
	// opm pulls with containers/image, which wants a signature policy.
	policy := filepath.Join(home, ".config", "containers", "policy.json")
	if err := os.MkdirAll(filepath.Dir(policy), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(policy, []byte(`{"default":[{"type":"insecureAcceptAnything"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(opmBin, "render", ref, "--use-http", "-o", "json")
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, "cache"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("opm render %s: %v\n%s", ref, err, stderr.String())
	}
	var objs []map[string]any
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var o map[string]any
		if err := dec.Decode(&o); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	return objs
}

// TestOpmReadsBuiltImages: opm renders the bundle image BundleImage builds from a bundle of this repository, and
// the catalog image CatalogImage builds from that rendering; PullCatalog reads back what opm wrote.
func TestOpmReadsBuiltImages(t *testing.T) {
	opmBin := opm(t)
	reg := newRegistry(t, false, nil)
	c := newClient(t, Options{})
	img, err := BundleImage(filepath.Join("..", "..", "bundles", "konnect-operator", "1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	bundleRef := reg.ref("bundles/konnect-operator:1.0.0")
	push(t, c, img, bundleRef)
	objs := render(t, opmBin, bundleRef)
	if len(objs) != 1 || objs[0]["schema"] != "olm.bundle" || objs[0]["package"] != "konnect-operator" ||
		!strings.HasPrefix(objs[0]["image"].(string), bundleRef) {
		t.Fatalf("opm rendered the bundle as %v", objs)
	}
	fbc, err := json.Marshal(objs[0])
	if err != nil {
		t.Fatal(err)
	}
	pkg := []byte(`{"schema":"olm.package","name":"konnect-operator","defaultChannel":"stable"}`)
	files := fstest.MapFS{"konnect-operator/catalog.json": {Data: append(append(pkg, '\n'), fbc...)}}
	catRef := reg.ref("catalogs/konnect:latest")
	catImg, err := CatalogImage(files)
	if err != nil {
		t.Fatal(err)
	}
	digest := push(t, c, catImg, catRef)
	rendered := render(t, opmBin, catRef)
	if len(rendered) != 2 || rendered[0]["schema"] != "olm.package" || !reflect.DeepEqual(rendered[1], objs[0]) {
		t.Errorf("opm rendered the catalog as %v", rendered)
	}
	cat, err := c.PullCatalog(context.Background(), catRef, digest)
	if err != nil || len(filesOf(t, cat)) != 1 {
		t.Fatalf("PullCatalog: %v, %v", cat, err)
	}
}
