package install_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/image"
	"github.com/almproject/alm/controllers/gc"
	"github.com/almproject/alm/controllers/install"
	"github.com/almproject/alm/controllers/internal/bundlecontent"
	"github.com/almproject/alm/controllers/internal/imagepull"
	"github.com/almproject/alm/controllers/internal/ownership"
	"github.com/almproject/alm/test/harness"
)

// setupWithBundles starts the Install and GC loops with a bundle cache of the test's own.
func setupWithBundles(t *testing.T) {
	t.Helper()
	c = harness.Client(t, cp)
	bundles := &bundlecontent.Source{Cache: &image.BundleCache{Dir: filepath.Join(t.TempDir(), "bundles")}, Clients: &imagepull.Clients{}}
	harness.StartManager(t, cp, func(mgr ctrl.Manager) error {
		if err := install.New(mgr, patientTimeout, bundles).SetupWithManager(mgr); err != nil {
			return err
		}
		return gc.New(mgr).SetupWithManager(mgr)
	})
}

// imageBundle writes the Demo's bundle, pushes it to reg under repository:tag, and creates the image CatalogSource
// the version is pulled with. It returns the reference, the image digest and the layer digest.
func imageBundle(t *testing.T, reg *harness.Registry, d harness.Demo, tag string) (ref, digest, layer string) {
	t.Helper()
	dir := harness.WriteBundle(t, t.TempDir(), d)
	ref = reg.Ref(d.Package + "/bundle:" + tag)
	digest, layer = reg.PushBundle(t, dir, ref)
	return ref, digest, layer
}

func createCatalogSource(t *testing.T, reg *harness.Registry, ns string) *operatorsv1alpha1.CatalogSource {
	t.Helper()
	cs := reg.ImageCatalogSource(ns, "images")
	if err := c.Create(t.Context(), cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

// waitBundleVerified waits for the version's BundleVerified condition to have status and reason, and returns it.
func waitBundleVerified(t *testing.T, ns, name string, status metav1.ConditionStatus, reason string) *metav1.Condition {
	t.Helper()
	var cond *metav1.Condition
	harness.Eventually(t, 60*time.Second, func() error {
		ov := &operatorsv1alpha1.OperatorVersion{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, ov); err != nil {
			return err
		}
		cond = apimeta.FindStatusCondition(ov.Status.Conditions, operatorsv1alpha1.ConditionBundleVerified)
		if cond == nil || cond.Status != status || cond.Reason != reason {
			return fmt.Errorf("%s is %s (%s: %s), BundleVerified %+v; want %s %s", name, ov.Status.Phase, ov.Status.Reason, ov.Status.Message, cond, status, reason)
		}
		return nil
	})
	return cond
}

// assertNothingApplied checks that no object carries the version's ownership labels.
func assertNothingApplied(t *testing.T, ns, name string) {
	t.Helper()
	sel := client.MatchingLabels{operatorsv1alpha1.LabelOwner: ownership.LabelValue(name), operatorsv1alpha1.LabelOwnerNamespace: ns}
	for _, list := range []client.ObjectList{
		&corev1.ConfigMapList{}, &corev1.ServiceList{}, &corev1.ServiceAccountList{}, &appsv1.DeploymentList{},
		&rbacv1.RoleList{}, &rbacv1.ClusterRoleList{}, &apiextensionsv1.CustomResourceDefinitionList{},
	} {
		if err := c.List(t.Context(), list, sel); err != nil {
			t.Fatal(err)
		}
		if n := apimeta.LenList(list); n != 0 {
			t.Errorf("%T: %d objects owned by %s, want none", list, n, name)
		}
	}
}

func TestInstallsFromBundleImage(t *testing.T) {
	setupWithBundles(t)
	ctx := t.Context()
	ns := harness.Namespace(t, c, "verify-image")
	reg := harness.NewRegistry(t)
	cs := createCatalogSource(t, reg, ns)
	d := harness.Demo{Namespace: ns, Name: "demo.v1.0.0", Version: "1.0.0", Package: ns}
	ref, digest, _ := imageBundle(t, reg, d, "v1.0.0")
	ov := harness.ImageOperatorVersion(d, ref, digest, cs)
	if err := c.Create(ctx, ov); err != nil {
		t.Fatal(err)
	}
	harness.WaitDeploymentAndMarkAvailable(t, c, ns, ns+"-operator", 60*time.Second)
	done := harness.WaitPhase(t, c, ns, ov.Name, operatorsv1alpha1.PhaseSucceeded, 30*time.Second)
	cond := apimeta.FindStatusCondition(done.Status.Conditions, operatorsv1alpha1.ConditionBundleVerified)
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != operatorsv1alpha1.ReasonBundleVerified || !strings.Contains(cond.Message, digest) {
		t.Errorf("BundleVerified = %+v, want True naming %s", cond, digest)
	}
	// The content came from the image: every object of the bundle, and the spec was not written.
	if len(done.Status.Owned) != 9 {
		t.Errorf("status.owned lists %d objects, want 9: %v", len(done.Status.Owned), done.Status.Owned)
	}
	if done.Spec.Install.StrategyName != "" || len(done.Spec.Objects) != 0 {
		t.Errorf("the installer wrote the bundle content into spec: install %q, %d objects", done.Spec.Install.StrategyName, len(done.Spec.Objects))
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ns + "-config"}, cm); err != nil || cm.Data["version"] != "1.0.0" {
		t.Errorf("ConfigMap from the bundle image: %v %v", cm.Data, err)
	}
}

func TestBundleImageUnavailableStaysPendingThenInstalls(t *testing.T) {
	setupWithBundles(t)
	ctx := t.Context()
	reg := harness.NewRegistry(t)
	cases := []struct {
		name   string
		reason string
		// breakIt pushes (or not) and makes the image unavailable; fixIt makes it available. They return the
		// reference and digest the version names.
		breakIt func(t *testing.T, d harness.Demo) (ref, digest string)
		fixIt   func(t *testing.T, d harness.Demo)
	}{
		{name: "registry down", reason: operatorsv1alpha1.ReasonRegistryUnreachable,
			breakIt: func(t *testing.T, d harness.Demo) (string, string) {
				ref, digest, _ := imageBundle(t, reg, d, "v1.0.0")
				reg.SetDown(true)
				return ref, digest
			},
			fixIt: func(*testing.T, harness.Demo) { reg.SetDown(false) }},
		{name: "tag not pushed yet", reason: operatorsv1alpha1.ReasonImageNotFound,
			breakIt: func(t *testing.T, d harness.Demo) (string, string) {
				img, err := image.BundleImage(harness.WriteBundle(t, t.TempDir(), d))
				if err != nil {
					t.Fatal(err)
				}
				h, err := img.Digest()
				if err != nil {
					t.Fatal(err)
				}
				return reg.Ref(d.Package + "/bundle:v1.0.0"), h.String()
			},
			fixIt: func(t *testing.T, d harness.Demo) { imageBundle(t, reg, d, "v1.0.0") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := harness.Namespace(t, c, "verify-unavailable")
			cs := createCatalogSource(t, reg, ns)
			d := harness.Demo{Namespace: ns, Name: "demo.v1.0.0", Version: "1.0.0", Package: ns}
			ref, digest := tc.breakIt(t, d)
			ov := harness.ImageOperatorVersion(d, ref, digest, cs)
			if err := c.Create(ctx, ov); err != nil {
				t.Fatal(err)
			}
			cond := waitBundleVerified(t, ns, ov.Name, metav1.ConditionFalse, tc.reason)
			pending := harness.WaitPhase(t, c, ns, ov.Name, operatorsv1alpha1.PhasePending, 10*time.Second)
			if pending.Status.Reason != operatorsv1alpha1.ReasonBundleUnavailable || !strings.Contains(cond.Message, ref) || !strings.Contains(pending.Status.Message, ref) {
				t.Errorf("Pending %s: %q, condition %q; want BundleUnavailable naming %s", pending.Status.Reason, pending.Status.Message, cond.Message, ref)
			}
			assertNothingApplied(t, ns, ov.Name)
			tc.fixIt(t, d)
			harness.WaitDeploymentAndMarkAvailable(t, c, ns, ns+"-operator", 90*time.Second)
			harness.WaitPhase(t, c, ns, ov.Name, operatorsv1alpha1.PhaseSucceeded, 30*time.Second)
			waitBundleVerified(t, ns, ov.Name, metav1.ConditionTrue, operatorsv1alpha1.ReasonBundleVerified)
		})
	}
}

func TestTagMovedAfterResolutionFails(t *testing.T) {
	setupWithBundles(t)
	ns := harness.Namespace(t, c, "verify-moved")
	reg := harness.NewRegistry(t)
	cs := createCatalogSource(t, reg, ns)
	d := harness.Demo{Namespace: ns, Name: "demo.v1.0.0", Version: "1.0.0", Package: ns}
	ref, resolved, _ := imageBundle(t, reg, d, "v1.0.0")
	// The tag is pushed again with other content after the catalog resolved it.
	moved := d
	moved.Image = "alm.local/someone-else:1"
	_, now, _ := imageBundle(t, reg, moved, "v1.0.0")
	ov := harness.ImageOperatorVersion(d, ref, resolved, cs)
	if err := c.Create(t.Context(), ov); err != nil {
		t.Fatal(err)
	}
	got := harness.WaitPhase(t, c, ns, ov.Name, operatorsv1alpha1.PhaseFailed, 60*time.Second)
	for _, s := range []string{ref, resolved, now} {
		if got.Status.Reason != operatorsv1alpha1.ReasonDigestMismatch || !strings.Contains(got.Status.Message, s) {
			t.Errorf("Failed %s: %q; want DigestMismatch naming %s", got.Status.Reason, got.Status.Message, s)
		}
	}
	assertNothingApplied(t, ns, ov.Name)
}

func TestTamperedBlobIsRefused(t *testing.T) {
	setupWithBundles(t)
	ns := harness.Namespace(t, c, "verify-tampered")
	reg := harness.NewRegistry(t)
	cs := createCatalogSource(t, reg, ns)
	d := harness.Demo{Namespace: ns, Name: "demo.v1.0.0", Version: "1.0.0", Package: ns}
	ref, digest, layer := imageBundle(t, reg, d, "v1.0.0")
	reg.TamperBlob(layer)
	ov := harness.ImageOperatorVersion(d, ref, digest, cs)
	if err := c.Create(t.Context(), ov); err != nil {
		t.Fatal(err)
	}
	cond := waitBundleVerified(t, ns, ov.Name, metav1.ConditionFalse, operatorsv1alpha1.ReasonDigestMismatch)
	if !strings.Contains(cond.Message, layer) {
		t.Errorf("BundleVerified message %q does not name the tampered layer %s", cond.Message, layer)
	}
	harness.WaitPhase(t, c, ns, ov.Name, operatorsv1alpha1.PhasePending, 10*time.Second)
	assertNothingApplied(t, ns, ov.Name)
}

func TestEmbeddedContentIsVerified(t *testing.T) {
	setupWithBundles(t)
	ctx := t.Context()
	ns := harness.Namespace(t, c, "verify-embedded")
	// Content as a catalog records it, with numbers, nulls and empty members that the API server may store in
	// another form than they were sent: the digest must survive the round trip.
	good := harness.WithContentDigest(t, harness.Demo{Namespace: ns, Name: "good.v1.0.0", Version: "1.0.0", Package: ns + "-good",
		ExtraObjects: []map[string]any{awkwardCRD(ns + "-good")}}.OperatorVersion())
	if err := c.Create(ctx, good); err != nil {
		t.Fatal(err)
	}
	stored := &operatorsv1alpha1.OperatorVersion{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(good), stored); err != nil {
		t.Fatal(err)
	}
	if d, _ := bundle.ContentDigest(&stored.Spec); d != good.Spec.Bundle.Digest {
		t.Errorf("the content digest changed through the API server: %s, sent %s", d, good.Spec.Bundle.Digest)
	}
	harness.WaitDeploymentAndMarkAvailable(t, c, ns, ns+"-good-operator", 60*time.Second)
	harness.WaitPhase(t, c, ns, good.Name, operatorsv1alpha1.PhaseSucceeded, 30*time.Second)
	waitBundleVerified(t, ns, good.Name, metav1.ConditionTrue, operatorsv1alpha1.ReasonBundleVerified)

	// The same content edited by hand after it was resolved (a ConfigMap's data changed).
	edited := harness.WithContentDigest(t, harness.Demo{Namespace: ns, Name: "edited.v1.0.0", Version: "1.0.0", Package: ns + "-edited"}.OperatorVersion())
	resolved := edited.Spec.Bundle.Digest
	edited.Spec.Objects[2] = runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + ns + `-edited-config"},"data":{"version":"evil"}}`)}
	now, _ := bundle.ContentDigest(&edited.Spec)
	if err := c.Create(ctx, edited); err != nil {
		t.Fatal(err)
	}
	got := harness.WaitPhase(t, c, ns, edited.Name, operatorsv1alpha1.PhaseFailed, 30*time.Second)
	if got.Status.Reason != operatorsv1alpha1.ReasonDigestMismatch || !strings.Contains(got.Status.Message, resolved) || !strings.Contains(got.Status.Message, now) {
		t.Errorf("Failed %s: %q; want DigestMismatch naming %s and %s", got.Status.Reason, got.Status.Message, resolved, now)
	}
	assertNothingApplied(t, ns, edited.Name)
}

// A version without spec.bundle (written by hand: a cluster admin, or a tenant where no admission policy stops
// it) has no digest to verify its content against: nothing of it is applied, and the status says why and what to do.
func TestVersionWithoutDigestIsNotInstalled(t *testing.T) {
	setupWithBundles(t)
	ns := harness.Namespace(t, c, "verify-nodigest")
	ov := harness.Demo{Namespace: ns, Name: "byhand.v1.0.0", Version: "1.0.0", Package: ns + "-byhand"}.OperatorVersion()
	ov.Spec.Bundle = nil
	if err := c.Create(t.Context(), ov); err != nil {
		t.Fatal(err)
	}
	got := harness.WaitPhase(t, c, ns, ov.Name, operatorsv1alpha1.PhaseFailed, 30*time.Second)
	if got.Status.Reason != operatorsv1alpha1.ReasonNoBundleDigest || !strings.Contains(got.Status.Message, "has no spec.bundle") ||
		!strings.Contains(got.Status.Message, "Declare an AppType") {
		t.Errorf("Failed %s: %q; want NoBundleDigest naming spec.bundle and the AppType to declare instead", got.Status.Reason, got.Status.Message)
	}
	waitBundleVerified(t, ns, ov.Name, metav1.ConditionFalse, operatorsv1alpha1.ReasonNoBundleDigest)
	assertNothingApplied(t, ns, ov.Name)
}

// awkwardCRD is a CRD whose schema has numbers written in several ways, a null member and empty members.
func awkwardCRD(pkg string) map[string]any {
	crd := harness.CRD(pkg+".example.com", "Gadget", "gadgets")
	var schema map[string]any
	_ = json.Unmarshal([]byte(`{"type":"object","properties":{"spec":{"type":"object","properties":{
		"size":{"type":"integer","minimum":1.0,"maximum":1e3,"default":2},
		"ratio":{"type":"number","multipleOf":0.25,"maximum":12.50},
		"labels":{"type":"object","additionalProperties":{"type":"string"}}}}}}`), &schema)
	v := crd["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)
	v["schema"] = map[string]any{"openAPIV3Schema": numbersAsWritten(schema)}
	crd["metadata"].(map[string]any)["creationTimestamp"] = nil
	crd["metadata"].(map[string]any)["annotations"] = map[string]any{}
	return crd
}

// numbersAsWritten re-decodes v keeping numbers as their literal text (json.Number), so the OperatorVersion is
// sent with "1.0" and "1e3", not with Go's re-encoding of them.
func numbersAsWritten(v map[string]any) map[string]any {
	data, _ := json.Marshal(v)
	dec := json.NewDecoder(strings.NewReader(strings.NewReplacer(`"minimum":1`, `"minimum":1.0`, `"maximum":1000`, `"maximum":1e3`, `"maximum":12.5`, `"maximum":12.50`).Replace(string(data))))
	dec.UseNumber()
	out := map[string]any{}
	_ = dec.Decode(&out)
	return out
}
