package bundlecontent

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/blang/semver/v4"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"github.com/operator-framework/api/pkg/lib/version"
	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/image"
	"github.com/almproject/alm/controllers/internal/imagepull"
	"github.com/almproject/alm/test/harness"
)

func embedded(t *testing.T) *operatorsv1alpha1.OperatorVersion {
	t.Helper()
	ov := &operatorsv1alpha1.OperatorVersion{}
	ov.Spec.PackageName, ov.Spec.Version = "p", version.OperatorVersion{Version: semver.MustParse("1.0.0")}
	ov.Spec.Install.StrategyName = "deployment"
	ov.Spec.Objects = []runtime.RawExtension{{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"v"}}`)}}
	d, err := bundle.ContentDigest(&ov.Spec)
	if err != nil {
		t.Fatal(err)
	}
	ov.Spec.Bundle = &operatorsv1alpha1.BundleReference{Digest: d}
	return ov
}

func TestCheckEmbedded(t *testing.T) {
	cases := []struct {
		name   string
		edit   func(ov *operatorsv1alpha1.OperatorVersion)
		wantOK bool
	}{
		{name: "as resolved", edit: func(*operatorsv1alpha1.OperatorVersion) {}, wantOK: true},
		{name: "fields outside the content may change", edit: func(ov *operatorsv1alpha1.OperatorVersion) { ov.Spec.DisplayName = "x" }, wantOK: true},
		{name: "objects edited", edit: func(ov *operatorsv1alpha1.OperatorVersion) {
			ov.Spec.Objects[0].Raw = []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"evil"}}`)
		}},
		{name: "object added", edit: func(ov *operatorsv1alpha1.OperatorVersion) {
			ov.Spec.Objects = append(ov.Spec.Objects, runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}}`)})
		}},
		{name: "install edited", edit: func(ov *operatorsv1alpha1.OperatorVersion) { ov.Spec.Install.StrategyName = "other" }},
		{name: "CRD descriptions edited", edit: func(ov *operatorsv1alpha1.OperatorVersion) {
			ov.Spec.CustomResourceDefinitions.Required = []opv1alpha1.CRDDescription{{Name: "a.b", Version: "v1", Kind: "A"}}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ov := embedded(t)
			want := ov.Spec.Bundle.Digest
			tc.edit(ov)
			r := CheckEmbedded(ov)
			if tc.wantOK {
				if r.Err != nil || r.Content != ov || !strings.Contains(r.Verified, want) {
					t.Fatalf("Result = %+v, want verified naming %s", r, want)
				}
				return
			}
			got, _ := bundle.ContentDigest(&ov.Spec)
			if r.Content != nil || r.Err == nil || !r.Err.Permanent || r.Err.Reason != operatorsv1alpha1.ReasonDigestMismatch ||
				!strings.Contains(r.Err.Message, want) || !strings.Contains(r.Err.Message, got) {
				t.Fatalf("Result = %+v, want a permanent DigestMismatch naming %s and %s", r, want, got)
			}
		})
	}
}

// A version without spec.bundle has no digest to verify its content against: nothing of it is applied, for good
// (issue 34, item 4).
func TestVerifyWithoutDigestIsRefused(t *testing.T) {
	ov := embedded(t)
	ov.Name, ov.Namespace = "by-hand", "tenant"
	ov.Spec.Bundle = nil
	var s *Source // no cache: content in spec needs none
	r, err := s.Verify(t.Context(), nil, ov, false)
	if err != nil || r.Content != nil || r.Err == nil || !r.Err.Permanent || r.Err.Reason != operatorsv1alpha1.ReasonNoBundleDigest ||
		!strings.Contains(r.Err.Message, "tenant/by-hand has no spec.bundle") || !strings.Contains(r.Err.Message, "Declare an AppType") {
		t.Fatalf("Verify = %+v, %v; want a permanent NoBundleDigest naming the version, spec.bundle and the fix", r, err)
	}
	ov = embedded(t)
	if r, err = s.Verify(t.Context(), nil, ov, false); err != nil || r.Err != nil || r.Content != ov {
		t.Fatalf("Verify = %+v, %v; want ov verified", r, err)
	}
	ov.Spec.Bundle.Image = "registry.example.com/b:1"
	ov.Spec.Install.StrategyName = ""
	if r, err = s.Verify(t.Context(), nil, ov, false); err != nil || r.Err == nil || r.Err.Permanent || r.Err.Reason != operatorsv1alpha1.ReasonBundleUnavailable {
		t.Fatalf("Verify = %+v, %v; want the image unavailable without a cache", r, err)
	}
}

func TestTagMoved(t *testing.T) {
	if e := tagMoved("r:1", "sha256:a", "sha256:a"); e != nil {
		t.Fatalf("same digest: %v", e)
	}
	e := tagMoved("r:1", "sha256:a", "sha256:b")
	if e == nil || !e.Permanent || e.Reason != operatorsv1alpha1.ReasonDigestMismatch {
		t.Fatalf("moved: %+v", e)
	}
	for _, s := range []string{"r:1", "sha256:a", "sha256:b"} {
		if !strings.Contains(e.Message, s) {
			t.Errorf("message %q does not name %s", e.Message, s)
		}
	}
}

func TestPullError(t *testing.T) {
	cases := []struct {
		name      string
		err       error
		reason    string
		permanent bool
	}{
		{"tampered blob: retried", &image.RefusedError{Image: "r@sha256:a", Rule: image.RuleDigest, Detail: "error verifying"}, operatorsv1alpha1.ReasonDigestMismatch, false},
		{"hostile content: the digest names it for good", &image.RefusedError{Image: "r@sha256:a", Rule: image.RuleTraversal}, operatorsv1alpha1.ReasonImageRefused, true},
		{"too large", &image.RefusedError{Image: "r@sha256:a", Rule: image.RuleFileSize}, operatorsv1alpha1.ReasonImageTooLarge, true},
		{"anything else: retried", fmt.Errorf("image r: %w", errors.New("boom")), operatorsv1alpha1.ReasonPullFailed, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := pullError("r:1", "sha256:a", tc.err)
			if e.Reason != tc.reason || e.Permanent != tc.permanent || !strings.Contains(e.Message, "r:1") || !strings.Contains(e.Message, tc.err.Error()) {
				t.Fatalf("pullError = %+v, want %s permanent=%v naming the image and the cause", e, tc.reason, tc.permanent)
			}
		})
	}
}

func TestMatches(t *testing.T) {
	ov := embedded(t)
	ov.Spec.Bundle.Image = "r:1"
	c := &Content{Package: "p", Version: semver.MustParse("1.0.0")}
	if e := matches(ov, c); e != nil {
		t.Fatal(e)
	}
	c.Version = semver.MustParse("2.0.0")
	if e := matches(ov, c); e == nil || !e.Permanent || e.Reason != ReasonInvalidBundle || !strings.Contains(e.Message, "version 2.0.0") {
		t.Fatalf("matches = %+v", e)
	}
}

func TestInvalidBundleNamesFileAndRule(t *testing.T) {
	e := invalidBundle("r:1", "sha256:a", []bundle.Problem{
		bundle.Warnf("r:1@sha256:a/manifests/x.yaml", "w", "", "just a warning"),
		bundle.Errorf("r:1@sha256:a/manifests/csv.yaml", bundle.RuleInstallStrategy, "", "no deployments"),
	})
	if !e.Permanent || e.Reason != ReasonInvalidBundle || !strings.Contains(e.Message, "manifests/csv.yaml: install-strategy: no deployments") ||
		strings.Contains(e.Message, "just a warning") {
		t.Fatalf("invalidBundle = %+v", e)
	}
}

func TestFillCopiesAndMemoIsBounded(t *testing.T) {
	ov := embedded(t)
	ov.Spec.Objects = nil
	c := &Content{Objects: []runtime.RawExtension{{Raw: []byte(`{"kind":"CustomResourceDefinition","spec":{"group":"g","names":{"kind":"K"}}}`)}}}
	out := c.fill(ov)
	out.Spec.Objects[0].Raw[0] = 'X'
	if ov.Spec.Objects != nil || c.Objects[0].Raw[0] != '{' {
		t.Fatal("fill shares memory with ov or the remembered content")
	}
	crd, err := c.CRD("g", "K")
	if err != nil || crd == nil {
		t.Fatalf("CRD = %v, %v", crd, err)
	}
	s := &Source{}
	for i := range memoSize + 3 {
		s.remember(fmt.Sprint(i), c)
	}
	if len(s.memo) != memoSize || s.cached("0") != nil || s.cached(fmt.Sprint(memoSize+2)) == nil {
		t.Fatalf("memo holds %d entries", len(s.memo))
	}
}

// A version never pulls with the credentials of another tenant's CatalogSource: spec.source must be in its own
// namespace or in ALM's. The refusal comes before anything is read.
func TestVerifyRefusesAnotherNamespacesCatalogSource(t *testing.T) {
	s := &Source{Cache: &image.BundleCache{Dir: t.TempDir()}, Clients: &imagepull.Clients{}, Namespace: "alm-system"}
	scheme := runtime.NewScheme()
	if err := operatorsv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		source string
		refuse bool
	}{{"team-b", true}, {"team-a", false}, {"alm-system", false}} {
		ov := embedded(t)
		ov.Namespace = "team-a"
		ov.Spec.Bundle = &operatorsv1alpha1.BundleReference{Image: "registry.example/b@sha256:" + strings.Repeat("0", 64), Digest: "sha256:" + strings.Repeat("0", 64)}
		ov.Spec.Source = &operatorsv1alpha1.CatalogReference{Namespace: tc.source, Name: "ops"}
		empty := fake.NewClientBuilder().WithScheme(scheme).Build() // no CatalogSource: an allowed source is "not found"
		res, err := s.Verify(t.Context(), empty, ov, false)
		refused := err == nil && res.Err != nil && res.Err.Reason == operatorsv1alpha1.ReasonInvalidSpec && strings.Contains(res.Err.Message, "another namespace")
		if refused != tc.refuse {
			t.Errorf("spec.source in %s: result %+v, err %v; refused = %v, want %v", tc.source, res.Err, err, refused, tc.refuse)
		}
	}
}

// The bundle cache is keyed by digest and shared by every CatalogSource, but a cache hit is served only to a
// catalog whose own credentials may pull the digest: naming another catalog's private bundle gets Unauthorized.
func TestCacheHitNeedsTheCatalogsOwnCredentials(t *testing.T) {
	inner := ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if u, p, ok := req.BasicAuth(); !ok || u != "alm" || p != "s3cret" {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	config := fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, host, base64.StdEncoding.EncodeToString([]byte("alm:s3cret")))
	kc, err := image.KeychainFromDockerConfigJSON([]byte(config))
	if err != nil {
		t.Fatal(err)
	}
	d := harness.Demo{Namespace: "team-a", Package: "priv", Name: "priv.v1.0.0", Version: "1.0.0"}
	img, err := image.BundleImage(harness.WriteBundle(t, t.TempDir(), d))
	if err != nil {
		t.Fatal(err)
	}
	digest, err := image.Push(t.Context(), img, host+"/bundles/priv:1.0.0", image.Options{Insecure: true, Keychain: kc})
	if err != nil {
		t.Fatal(err)
	}
	source := func(name string, secrets ...string) *operatorsv1alpha1.CatalogSource {
		return &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name},
			Spec: operatorsv1alpha1.CatalogSourceSpec{Image: &operatorsv1alpha1.ImageSource{Ref: host + "/catalog:1", Insecure: true, PullSecrets: secrets}}}
	}
	private, public := source("private", "pull"), source("public")
	scheme := runtime.NewScheme()
	if err := operatorsv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(private, public, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "pull"}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(config)}}).Build()
	s := &Source{Cache: &image.BundleCache{Dir: t.TempDir()}, Clients: &imagepull.Clients{}, Namespace: "alm-system"}
	ref := host + "/bundles/priv@" + digest

	res, err := s.Verify(t.Context(), reader, harness.ImageOperatorVersion(d, ref, digest, private), false)
	if err != nil || res.Err != nil || res.Content == nil {
		t.Fatalf("with the pull Secret: %+v, %v; want the content", res.Err, err)
	}
	res, err = s.Verify(t.Context(), reader, harness.ImageOperatorVersion(d, ref, digest, public), false)
	if err != nil || res.Content != nil || res.Err == nil || res.Err.Reason != operatorsv1alpha1.ReasonUnauthorized {
		t.Fatalf("the same digest through a catalog without credentials: content %v, error %+v, %v; want Unauthorized and no content", res.Content != nil, res.Err, err)
	}
}
