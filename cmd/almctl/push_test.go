package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"io/fs"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/blang/semver/v4"
	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/almproject/alm/catalog/image"
)

// bundles is the repository's own catalog: the konnect-operator versions and gateway-config 0.1.0.
const bundles = "../../bundles"

// repositoryBundles counts the bundle directories of bundles (<package>/<version>) and returns the newest
// konnect-operator version.
func repositoryBundles(t *testing.T) (count int, newestKonnect string) {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(bundles, "*", "*", "manifests"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no bundles under %s: %v", bundles, err)
	}
	newest := semver.MustParse("0.0.0")
	for _, d := range dirs {
		pkgDir, version := filepath.Split(filepath.Dir(d))
		if filepath.Base(pkgDir) != "konnect-operator" {
			continue
		}
		if v := semver.MustParse(version); v.GT(newest) {
			newest = v
		}
	}
	return len(dirs), newest.String()
}

// testRegistry is go-containerregistry's in-process registry on loopback (plain HTTP), counting requests.
type testRegistry struct {
	host string
	mu   sync.Mutex
	reqs int
}

// newRegistry starts a registry; wrap (optional) wraps its handler inside the counting one.
func newRegistry(t *testing.T, wrap func(http.Handler) http.Handler) *testRegistry {
	t.Helper()
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	if wrap != nil {
		h = wrap(h)
	}
	r := &testRegistry{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.reqs++
		r.mu.Unlock()
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.host = strings.TrimPrefix(srv.URL, "http://")
	return r
}

func (r *testRegistry) ref(repo string) string { return r.host + "/" + repo }

func (r *testRegistry) requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reqs
}

// noCredentials is an environment whose docker config holds no credentials.
func noCredentials(t *testing.T) []string {
	return []string{"DOCKER_CONFIG=" + t.TempDir()}
}

// imageClient is a plain-HTTP client for the test registries.
func imageClient(t *testing.T) *image.Client {
	t.Helper()
	c, err := image.NewClient(image.Options{Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// mustRun runs almctl, fails unless it exits 0, and returns its stdout without the final newline.
func mustRun(t *testing.T, env []string, args ...string) string {
	t.Helper()
	stdout, stderr, code := run(t, env, args...)
	if code != 0 {
		t.Fatalf("almctl %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, stdout, stderr)
	}
	return strings.TrimSuffix(stdout, "\n")
}

// splitDigestRef splits REPO@sha256:… and fails on anything else.
func splitDigestRef(t *testing.T, ref string) (repo, digest string) {
	t.Helper()
	repo, digest, ok := strings.Cut(ref, "@")
	if !ok || !strings.HasPrefix(digest, "sha256:") || len(digest) != len("sha256:")+64 || strings.ContainsAny(ref, " \n") {
		t.Fatalf("%q is not a reference by digest (REPO@sha256:…)", ref)
	}
	return repo, digest
}

// jsonDocuments decodes a stream of JSON documents.
func jsonDocuments(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	for dec.More() {
		var d map[string]any
		if err := dec.Decode(&d); err != nil {
			t.Fatalf("not a JSON stream: %v\n%s", err, data)
		}
		out = append(out, d)
	}
	return out
}

// ofSchema are the documents of one schema.
func ofSchema(docs []map[string]any, schema string) []map[string]any {
	var out []map[string]any
	for _, d := range docs {
		if d["schema"] == schema {
			out = append(out, d)
		}
	}
	return out
}

// propertyTypes lists an olm.bundle document's property types.
func propertyTypes(doc map[string]any) map[string]int {
	n := map[string]int{}
	props, _ := doc["properties"].([]any)
	for _, p := range props {
		if m, ok := p.(map[string]any); ok {
			n[m["type"].(string)]++
		}
	}
	return n
}

// TestBundlePush: the pushed image, pulled back, holds the bundle directory's files byte for byte; stdout is the
// image by digest, the same for the same directory.
func TestBundlePush(t *testing.T) {
	reg := newRegistry(t, nil)
	dir := filepath.Join(bundles, "konnect-operator", "1.0.0")
	ref := reg.ref("bundles/konnect-operator:1.0.0")
	out := mustRun(t, noCredentials(t), "bundle", "push", "--insecure", dir, ref)
	repo, digest := splitDigestRef(t, out)
	if repo != reg.ref("bundles/konnect-operator") {
		t.Errorf("stdout %q: repository %q, want %q", out, repo, reg.ref("bundles/konnect-operator"))
	}
	c := imageClient(t)
	if got, err := c.Digest(context.Background(), ref); err != nil || got != digest {
		t.Fatalf("the tag points at %s (%v), stdout says %s", got, err, digest)
	}
	pulled := filepath.Join(t.TempDir(), "b")
	b, err := c.PullBundle(context.Background(), out, digest, pulled)
	if err != nil {
		t.Fatal(err)
	}
	if b.Package != "konnect-operator" {
		t.Errorf("package label %q", b.Package)
	}
	if want, got := readTree(t, dir), readTree(t, pulled); !reflect.DeepEqual(want, got) || len(want) < 3 {
		t.Errorf("pulled bundle differs: %d files, want %d", len(got), len(want))
	}
	if again := mustRun(t, noCredentials(t), "bundle", "push", "--insecure", dir, ref); again != out {
		t.Errorf("pushed again as %s, first %s", again, out)
	}
}

// TestBundlePushRefusesErrors: a bundle with an error is reported with file and rule and nothing reaches the
// registry.
func TestBundlePushRefusesErrors(t *testing.T) {
	reg := newRegistry(t, nil)
	stdout, stderr, code := run(t, noCredentials(t), "bundle", "push", "--insecure", bad+"/invalid-semver/bad/1.0.0", reg.ref("bundles/bad:1.0.0"))
	if code != 1 || stdout != "" || !strings.Contains(stderr, "bad.v1.0.clusterserviceversion.yaml: invalid-semver") ||
		!strings.Contains(stderr, "nothing pushed") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if n := reg.requests(); n != 0 {
		t.Errorf("the registry got %d requests for a refused bundle", n)
	}
}

// TestPushCredentials: without credentials the registry's 401 says to log in with docker login; with the docker
// config's credentials (DOCKER_CONFIG) the push works.
func TestPushCredentials(t *testing.T) {
	reg := newRegistry(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != "alice" || p != "s3cret" {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"log in"}]}`, http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	dir, ref := filepath.Join(bundles, "gateway-config", "0.1.0"), reg.ref("bundles/gateway-config:0.1.0")
	_, stderr, code := run(t, noCredentials(t), "bundle", "push", "--insecure", dir, ref)
	if code != 1 || !strings.Contains(stderr, "docker login "+reg.host) || !strings.Contains(stderr, ref) {
		t.Errorf("unauthenticated push: exit %d\n%s", code, stderr)
	}
	config := t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte("alice:s3cret"))
	if err := os.WriteFile(filepath.Join(config, "config.json"), []byte(`{"auths":{"`+reg.host+`":{"auth":"`+auth+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	splitDigestRef(t, mustRun(t, []string{"DOCKER_CONFIG=" + config}, "bundle", "push", "--insecure", dir, ref))
}

// TestPushTLS: a registry whose certificate is signed by a CA the system does not trust is refused with the way
// out (--ca-file), and works with --ca-file.
func TestPushTLS(t *testing.T) {
	srv := httptest.NewTLSServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	dir, ref := filepath.Join(bundles, "gateway-config", "0.1.0"), strings.TrimPrefix(srv.URL, "https://")+"/bundles/gateway-config:0.1.0"
	_, stderr, code := run(t, noCredentials(t), "bundle", "push", dir, ref)
	if code != 1 || !strings.Contains(stderr, "--ca-file") {
		t.Errorf("untrusted certificate: exit %d\n%s", code, stderr)
	}
	splitDigestRef(t, mustRun(t, noCredentials(t), "bundle", "push", "--ca-file", ca, dir, ref))
}

// pullFBC pulls a catalog image by its digest reference and returns its files.
func pullFBC(t *testing.T, ref string) map[string][]byte {
	t.Helper()
	_, digest := splitDigestRef(t, ref)
	cat, err := imageClient(t).PullCatalog(context.Background(), ref, digest)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	if cat.Labels[image.LabelConfigs] != "/configs" {
		t.Errorf("labels %v", cat.Labels)
	}
	files := map[string][]byte{}
	err = fs.WalkDir(cat.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files[p], err = fs.ReadFile(cat.FS(), p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// pushBundlesCatalog runs `almctl catalog push bundles` to reg and returns the catalog image by digest and its
// catalog.json.
func pushBundlesCatalog(t *testing.T, reg *testRegistry, tag string, extra ...string) (string, []byte) {
	t.Helper()
	args := append([]string{"catalog", "push", "--insecure", bundles, reg.ref("catalogs/konnect:" + tag), "--bundle-repo", reg.ref("bundles")}, extra...)
	ref := mustRun(t, noCredentials(t), args...)
	files := pullFBC(t, ref)
	if len(files) != 1 || files["catalog.json"] == nil {
		t.Fatalf("catalog image files: %v", reflect.ValueOf(files).MapKeys())
	}
	return ref, files["catalog.json"]
}
