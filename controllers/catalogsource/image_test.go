package catalogsource_test

import (
	"archive/tar"
	"bytes"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	corev1 "k8s.io/api/core/v1"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/image"
	"github.com/almproject/alm/catalog/index"
	"github.com/almproject/alm/controllers/registry"
	"github.com/almproject/alm/test/harness"
	"github.com/almproject/alm/test/opm"
)

// imageSource creates an image CatalogSource for ref with a poll interval long enough that only the test's pokes
// poll it.
func imageSource(t *testing.T, c client.Client, ns, name, ref string) client.ObjectKey {
	t.Helper()
	cs := &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: operatorsv1alpha1.CatalogSourceSpec{Image: &operatorsv1alpha1.ImageSource{Ref: ref, Insecure: true,
			PollInterval: &metav1.Duration{Duration: time.Hour}}}}
	if err := c.Create(t.Context(), cs); err != nil {
		t.Fatal(err)
	}
	return client.ObjectKeyFromObject(cs)
}

// poke makes the loop poll now, as `kubectl annotate` does, and waits until the registry was asked for the catalog's
// manifest.
func poke(t *testing.T, c client.Client, r *harness.Registry, key client.ObjectKey) {
	t.Helper()
	before, _ := r.Requests()
	cs := &operatorsv1alpha1.CatalogSource{}
	if err := c.Get(t.Context(), key, cs); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(cs.DeepCopy())
	cs.Annotations = map[string]string{"refresh": fmt.Sprint(time.Now().UnixNano())}
	if err := c.Patch(t.Context(), cs, patch); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, func() error {
		if m, _ := r.Requests(); m == before {
			return errors.New("the registry was not asked for the catalog's manifest yet")
		}
		return nil
	})
}

func readyReason(want string, contains ...string) func(*operatorsv1alpha1.CatalogSource) error {
	return func(cs *operatorsv1alpha1.CatalogSource) error {
		cond := apimeta.FindStatusCondition(cs.Status.Conditions, operatorsv1alpha1.ConditionReady)
		if cond == nil || cond.Reason != want {
			return fmt.Errorf("Ready = %+v, want reason %s", cond, want)
		}
		for _, s := range contains {
			if !strings.Contains(cond.Message, s) {
				return fmt.Errorf("Ready message %q does not mention %q", cond.Message, s)
			}
		}
		return nil
	}
}

// An image CatalogSource serves a File-Based Catalog image whose bundles exist only as bundle images; a poll of an
// unchanged tag asks for the manifest digest and downloads nothing; a new image on the tag is served whole on the
// next poll; an unreachable registry and a hostile image keep the last good catalog serving.
func TestImageCatalog(t *testing.T) {
	c, reg := start(t)
	ns := harness.Namespace(t, c, "catsrc-img")
	r := harness.NewRegistry(t)
	dir := t.TempDir()
	harness.WriteBundle(t, dir, harness.Demo{Package: "img", Name: "img.v1.0.0", Version: "1.0.0"})
	first := r.PushCatalog(t, map[string][]byte{"img/catalog.json": r.ImageCatalog(t, dir)}, "catalogs/ops:latest")
	key := imageSource(t, c, ns, "ops", r.Host+"/catalogs/ops:latest")

	cs := waitStatus(t, c, key, counts(1, 1, 0))
	if cs.Status.Image == nil || cs.Status.Image.Digest != first || cs.Status.Image.Ref != r.Host+"/catalogs/ops@"+first {
		t.Fatalf("status.image = %+v, want digest %s", cs.Status.Image, first)
	}
	b := reg.Index().Bundle("img", "img.v1.0.0")
	if b == nil || b.HasManifests() || !strings.HasPrefix(b.Image, r.Host+"/bundles/img@sha256:") || b.ImageDigest == "" {
		t.Fatalf("bundle img.v1.0.0 = %+v, want an image-only bundle named by digest", b)
	}

	// Unchanged polls: one manifest request each, no blob.
	manifests, blobs := r.Requests()
	for range 3 {
		poke(t, c, r, key)
	}
	cs = waitStatus(t, c, key, counts(1, 1, 0))
	if m, bl := r.Requests(); m-manifests < 3 || bl != blobs {
		t.Errorf("3 unchanged polls made %d manifest requests and %d blob downloads, want 3 or more and 0", m-manifests, bl-blobs)
	}
	if !cs.Status.Image.LastChange.Equal(cs.Status.LastSync) || cs.Status.Image.Digest != first {
		t.Errorf("unchanged polls changed what is served: %+v, last sync %v", cs.Status.Image, cs.Status.LastSync)
	}

	// A new catalog image on the tag, with 1.1.0 replacing 1.0.0, is served on the next poll.
	harness.WriteBundle(t, dir, harness.Demo{Package: "img", Name: "img.v1.1.0", Version: "1.1.0", Replaces: "img.v1.0.0"})
	second := r.PushCatalog(t, map[string][]byte{"img/catalog.json": r.ImageCatalog(t, dir)}, "catalogs/ops:latest")
	poke(t, c, r, key)
	cs = waitStatus(t, c, key, counts(1, 2, 0))
	if cs.Status.Image.Digest != second || cs.Status.Image.LastChange == nil {
		t.Errorf("status.image = %+v, want digest %s and a last change", cs.Status.Image, second)
	}
	if res, err := reg.Index().Resolve(index.Request{Package: "img", Catalogs: []string{registry.Name(key)}}); err != nil || res.Chosen == nil || res.Chosen.Name != "img.v1.1.0" {
		t.Errorf("img resolves to %v (err %v), want img.v1.1.0", res.Chosen, err)
	}

	// The registry goes away: Ready says why, and the catalog keeps serving.
	r.SetDown(true)
	poke(t, c, r, key)
	waitStatus(t, c, key, readyReason(operatorsv1alpha1.ReasonRegistryUnreachable, "catalogs/ops:latest", "still serving "+r.Host+"/catalogs/ops@"+second))
	if reg.Index().Bundle("img", "img.v1.1.0") == nil {
		t.Error("the last good catalog is no longer served while the registry is unreachable")
	}
	r.SetDown(false)
	poke(t, c, r, key)
	waitStatus(t, c, key, readyReason(operatorsv1alpha1.ReasonSynced))
}

// A private registry over TLS with basic auth: the pull Secret's credentials and the CA bundle's roots are used, and
// each missing one is reported with its reason.
func TestImageCatalogPrivateRegistry(t *testing.T) {
	c, _ := start(t)
	ns := harness.Namespace(t, c, "catsrc-tls")
	inner := ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if u, p, ok := req.BasicAuth(); !ok || u != "alm" || p != "s3cret" {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "https://")
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	auth := base64.StdEncoding.EncodeToString([]byte("alm:s3cret"))
	dockerConfig := fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, host, auth)
	keychain, err := image.KeychainFromDockerConfigJSON([]byte(dockerConfig))
	if err != nil {
		t.Fatal(err)
	}
	img, err := image.CatalogImage(fstest.MapFS{"p/catalog.json": {Data: []byte(minimalFBC)}})
	if err != nil {
		t.Fatal(err)
	}
	ref := host + "/private/ops:v1"
	if _, err := image.Push(t.Context(), img, ref, image.Options{CABundle: ca, Keychain: keychain}); err != nil {
		t.Fatal(err)
	}
	create := func(name string, secret, withCA bool) client.ObjectKey {
		src := &operatorsv1alpha1.ImageSource{Ref: ref}
		if secret {
			src.PullSecrets = []string{"pull"}
		}
		if withCA {
			src.CABundle = &operatorsv1alpha1.ConfigMapKeySelector{Name: "registry-ca", Key: "ca.crt"}
		}
		cs := &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: operatorsv1alpha1.CatalogSourceSpec{Image: src}}
		if err := c.Create(t.Context(), cs); err != nil {
			t.Fatal(err)
		}
		return client.ObjectKeyFromObject(cs)
	}
	for _, obj := range []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pull"}, Type: corev1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(dockerConfig)}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "registry-ca"}, Data: map[string]string{"ca.crt": string(ca)}},
	} {
		if err := c.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	waitStatus(t, c, create("good", true, true), counts(1, 1, 0))
	waitStatus(t, c, create("no-secret", false, true), readyReason(operatorsv1alpha1.ReasonUnauthorized, ref))
	waitStatus(t, c, create("no-ca", true, false), readyReason(operatorsv1alpha1.ReasonTLSError, ref))
	cs := &operatorsv1alpha1.CatalogSource{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "good"}, cs); err != nil {
		t.Fatal(err)
	}
	for _, cond := range cs.Status.Conditions {
		if strings.Contains(cond.Message, "s3cret") || strings.Contains(cond.Message, auth) {
			t.Errorf("a condition shows the credentials: %+v", cond)
		}
	}
}

// A hostile catalog image (an entry that climbs out of the configs directory) and a SQLite index image are refused
// with the image, the layer and the rule, and the catalog served before keeps serving.
func TestImageCatalogRefusesHostileImages(t *testing.T) {
	c, reg := start(t)
	ns := harness.Namespace(t, c, "catsrc-hostile")
	r := harness.NewRegistry(t)
	r.PushCatalog(t, map[string][]byte{"p/catalog.json": []byte(minimalFBC)}, "catalogs/ops:latest")
	key := imageSource(t, c, ns, "ops", r.Host+"/catalogs/ops:latest")
	waitStatus(t, c, key, counts(1, 1, 0))

	for _, tc := range []struct {
		name, reason string
		img          v1.Image
		mentions     []string
	}{
		{"path traversal", operatorsv1alpha1.ReasonImageRefused, rawImage(t, map[string]string{image.LabelConfigs: "/configs"},
			"configs/p/catalog.json", minimalFBC, "configs/../../etc/evil.json", "{}"), []string{"path-traversal", "layer sha256:", "etc/evil.json"}},
		{"SQLite index", operatorsv1alpha1.ReasonSQLiteIndexImage, rawImage(t, map[string]string{image.LabelDatabase: "/database/index.db"},
			"database/index.db", "SQLite format 3"), []string{"opm migrate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := image.Push(t.Context(), tc.img, r.Host+"/catalogs/ops:latest", image.Options{Insecure: true}); err != nil {
				t.Fatal(err)
			}
			poke(t, c, r, key)
			waitStatus(t, c, key, readyReason(tc.reason, append(tc.mentions, "still serving")...))
			if reg.Index().Bundle("p", "p.v1.0.0") == nil {
				t.Error("the catalog served before is gone")
			}
		})
	}
}

// minimalFBC is a File-Based Catalog of one package with one bundle whose image is pinned.
const minimalFBC = `{"schema":"olm.package","name":"p","defaultChannel":"stable"}
{"schema":"olm.channel","package":"p","name":"stable","entries":[{"name":"p.v1.0.0"}]}
{"schema":"olm.bundle","package":"p","name":"p.v1.0.0","image":"registry.example/p@sha256:0000000000000000000000000000000000000000000000000000000000000000","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}
`

// rawImage builds an image of one uncompressed layer holding the given name/content pairs, with config labels,
// without the checks image.CatalogImage makes.
func rawImage(t *testing.T, labels map[string]string, pairs ...string) v1.Image {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i := 0; i < len(pairs); i += 2 {
		if err := tw.WriteHeader(&tar.Header{Name: pairs[i], Mode: 0o644, Size: int64(len(pairs[i+1])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(pairs[i+1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Config.Labels = labels
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// Plain HTTP is honoured only for a loopback registry: anything else is refused before any request, naming the
// field and the rule.
func TestInsecureOnlyOnLoopback(t *testing.T) {
	c, _ := start(t)
	ns := harness.Namespace(t, c, "catsrc-insecure")
	cs := &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "remote"},
		Spec: operatorsv1alpha1.CatalogSourceSpec{Image: &operatorsv1alpha1.ImageSource{Ref: "registry.example/catalogs/ops:v1", Insecure: true}}}
	if err := c.Create(t.Context(), cs); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, c, client.ObjectKeyFromObject(cs), readyReason(operatorsv1alpha1.ReasonInvalidSpec,
		"spec.image.insecure", "only for a registry on loopback", "registry.example"))
}

// A File-Based Catalog written by real opm (its basic template rendered from bundle images, manifests migrated to
// olm.csv.metadata as current opm catalogs carry them) is served unchanged: every bundle, by the image digest opm
// recorded.
func TestOpmWrittenCatalogIsServed(t *testing.T) {
	c, reg := start(t)
	ns := harness.Namespace(t, c, "catsrc-opm")
	r := harness.NewRegistry(t)
	dir := t.TempDir()
	v1 := r.PushBundleByDigest(t, harness.WriteBundle(t, dir, harness.Demo{Package: "opmp", Name: "opmp.v1.0.0", Version: "1.0.0"}), "bundles/opmp", "1.0.0")
	v2 := r.PushBundleByDigest(t, harness.WriteBundle(t, dir, harness.Demo{Package: "opmp", Name: "opmp.v1.1.0", Version: "1.1.0", Replaces: "opmp.v1.0.0"}), "bundles/opmp", "1.1.0")
	template := fmt.Sprintf(`schema: olm.template.basic
entries:
- {schema: olm.package, name: opmp, defaultChannel: stable}
- {schema: olm.channel, package: opmp, name: stable, entries: [{name: opmp.v1.0.0}, {name: opmp.v1.1.0, replaces: opmp.v1.0.0}]}
- {schema: olm.bundle, image: %s}
- {schema: olm.bundle, image: %s}
`, v1, v2)
	path := filepath.Join(t.TempDir(), "template.yaml")
	if err := os.WriteFile(path, []byte(template), 0o644); err != nil {
		t.Fatal(err)
	}
	rendered, err := opm.Run(t, "alpha", "render-template", "basic", path, "--use-http", "--migrate-level", "bundle-object-to-csv-metadata", "-o", "json")
	if err != nil {
		t.Fatalf("opm render-template: %v\n%s", err, rendered)
	}
	if strings.Contains(string(rendered), "olm.bundle.object") || !strings.Contains(string(rendered), "olm.csv.metadata") {
		t.Fatalf("opm's catalog is not the csv.metadata-only kind this test is about:\n%.2000s", rendered)
	}
	r.PushCatalog(t, map[string][]byte{"opmp/catalog.json": rendered}, "catalogs/opm:latest")
	key := imageSource(t, c, ns, "opm", r.Host+"/catalogs/opm:latest")
	waitStatus(t, c, key, counts(1, 2, 0))
	res, err := reg.Index().Resolve(index.Request{Package: "opmp", Catalogs: []string{registry.Name(key)}, From: "1.0.0", FromName: "opmp.v1.0.0"})
	if err != nil || res.Chosen == nil || res.Chosen.Name != "opmp.v1.1.0" {
		t.Fatalf("opmp from 1.0.0 resolves to %v (err %v), want opmp.v1.1.0", res.Chosen, err)
	}
	ov, err := res.OperatorVersion(ns)
	if err != nil {
		t.Fatal(err)
	}
	if b := ov.Spec.Bundle; b == nil || b.Image != v2 || !strings.HasSuffix(v2, "@"+b.Digest) || ov.Spec.Install.StrategyName != "" {
		t.Errorf("the OperatorVersion of opmp.v1.1.0 has spec.bundle %+v and install %q; want image %s by its digest and no install (read from the image)",
			ov.Spec.Bundle, ov.Spec.Install.StrategyName, v2)
	}
	if ov.Spec.DisplayName == "" || len(ov.Spec.CustomResourceDefinitions.Owned) == 0 {
		t.Errorf("olm.csv.metadata did not reach the OperatorVersion: displayName %q, owned CRDs %v", ov.Spec.DisplayName, ov.Spec.CustomResourceDefinitions.Owned)
	}
}
