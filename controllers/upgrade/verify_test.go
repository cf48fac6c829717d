package upgrade_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/image"
	"github.com/almproject/alm/controllers/gc"
	"github.com/almproject/alm/controllers/install"
	"github.com/almproject/alm/controllers/internal/bundlecontent"
	"github.com/almproject/alm/controllers/internal/imagepull"
	"github.com/almproject/alm/controllers/upgrade"
	"github.com/almproject/alm/test/harness"
)

// An upgrade whose new version's content cannot be verified applies nothing: the old version stays Succeeded and
// its Deployment is not touched, whether the new content was edited after resolution (a permanent failure) or its
// bundle image cannot be pulled (it waits).
func TestUnverifiedUpgradeLeavesTheOldVersionRunning(t *testing.T) {
	c := harness.Client(t, cp)
	bundles := &bundlecontent.Source{Cache: &image.BundleCache{Dir: filepath.Join(t.TempDir(), "bundles")}, Clients: &imagepull.Clients{}}
	harness.StartManager(t, cp, func(mgr ctrl.Manager) error {
		for _, r := range []interface{ SetupWithManager(ctrl.Manager) error }{
			install.New(mgr, installTimeout, bundles), upgrade.New(mgr, installTimeout, bundles), gc.New(mgr),
		} {
			if err := r.SetupWithManager(mgr); err != nil {
				return err
			}
		}
		return nil
	})
	reg := harness.NewRegistry(t)
	cases := []struct {
		name string
		// v2 returns the new version; wait waits for the state it must hold in.
		v2   func(t *testing.T, d harness.Demo, cs *operatorsv1alpha1.CatalogSource) *operatorsv1alpha1.OperatorVersion
		wait func(t *testing.T, ns, name string)
	}{
		{name: "content edited after resolution",
			v2: func(t *testing.T, d harness.Demo, _ *operatorsv1alpha1.CatalogSource) *operatorsv1alpha1.OperatorVersion {
				ov := harness.WithContentDigest(t, d.OperatorVersion())
				ov.Spec.Objects[2] = runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + d.Package + `-config"},"data":{"version":"evil"}}`)}
				return ov
			},
			wait: func(t *testing.T, ns, name string) {
				got := harness.WaitPhase(t, c, ns, name, operatorsv1alpha1.PhaseFailed, 30*time.Second)
				if got.Status.Reason != operatorsv1alpha1.ReasonDigestMismatch || strings.Count(got.Status.Message, "sha256:") != 2 {
					t.Errorf("v2 Failed %s: %q; want DigestMismatch naming both digests", got.Status.Reason, got.Status.Message)
				}
			}},
		{name: "bundle image unavailable",
			v2: func(t *testing.T, d harness.Demo, cs *operatorsv1alpha1.CatalogSource) *operatorsv1alpha1.OperatorVersion {
				ref := reg.Ref(d.Package + "/bundle:v2.0.0")
				digest, _ := reg.PushBundle(t, harness.WriteBundle(t, t.TempDir(), d), ref)
				reg.SetDown(true)
				t.Cleanup(func() { reg.SetDown(false) })
				return harness.ImageOperatorVersion(d, ref, digest, cs)
			},
			wait: func(t *testing.T, ns, name string) {
				harness.Eventually(t, 60*time.Second, func() error {
					ov := &operatorsv1alpha1.OperatorVersion{}
					if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, ov); err != nil {
						return err
					}
					cond := apimeta.FindStatusCondition(ov.Status.Conditions, operatorsv1alpha1.ConditionBundleVerified)
					if ov.Status.Phase != operatorsv1alpha1.PhasePending || cond == nil || cond.Reason != operatorsv1alpha1.ReasonRegistryUnreachable {
						return fmt.Errorf("v2 is %s, BundleVerified %+v; want Pending, RegistryUnreachable", ov.Status.Phase, cond)
					}
					return nil
				})
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := harness.Namespace(t, c, "upgrade-unverified")
			cs := reg.ImageCatalogSource(ns, "images")
			if err := c.Create(t.Context(), cs); err != nil {
				t.Fatal(err)
			}
			v1 := install1(t, c, ns)
			before := &appsv1.Deployment{}
			if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: ns + "-operator"}, before); err != nil {
				t.Fatal(err)
			}
			v2 := tc.v2(t, harness.Demo{Namespace: ns, Package: ns, Name: "demo.v2.0.0", Version: "2.0.0", Replaces: v1.Name}, cs)
			if err := c.Create(t.Context(), v2); err != nil {
				t.Fatal(err)
			}
			tc.wait(t, ns, v2.Name)
			after := &appsv1.Deployment{}
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(before), after); err != nil {
				t.Fatal(err)
			}
			if after.ResourceVersion != before.ResourceVersion || len(after.OwnerReferences) != 1 {
				t.Errorf("v1's Deployment was touched: resourceVersion %s -> %s, image %s, owners %v",
					before.ResourceVersion, after.ResourceVersion, after.Spec.Template.Spec.Containers[0].Image, after.OwnerReferences)
			}
			if got := harness.WaitPhase(t, c, ns, v1.Name, operatorsv1alpha1.PhaseSucceeded, time.Second); got.Status.ReplacedBy != "" {
				t.Errorf("v1 is replaced by %s", got.Status.ReplacedBy)
			}
		})
	}
}
