package apptype_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/fbc"
	"github.com/almproject/alm/catalog/index"
	"github.com/almproject/alm/controllers/apptype"
	"github.com/almproject/alm/controllers/registry"
	"github.com/almproject/alm/test/harness"
	"github.com/almproject/alm/test/localkube"
)

var cp *localkube.Cluster

const almNamespace = "alm-system"

func TestMain(m *testing.M) {
	os.Exit(localkube.RunTests(m, localkube.Options{
		CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd", "bases")},
	}, &cp))
}

// konnectCatalog is a directory catalog of the Konnect operator's bundles 1.0.0 and 1.1.0 with an olm.deprecations
// document beside them that deprecates 1.0.0, registered as a catalog of ALM's namespace.
func konnectCatalog(t *testing.T) (*registry.Registry, string) {
	t.Helper()
	dir := t.TempDir()
	for _, v := range []string{"1.0.0", "1.1.0"} {
		addBundle(t, dir, v)
	}
	deprecations := "schema: olm.deprecations\npackage: konnect-operator\nentries:\n" +
		"- reference: {schema: olm.bundle, name: konnect-operator.v1.0.0}\n  message: 1.0.0 has a known bug; upgrade to 1.1.0\n"
	if err := os.WriteFile(filepath.Join(dir, "konnect-operator", "deprecations.yaml"), []byte(deprecations), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := registry.New()
	load(t, reg, dir, "v1")
	return reg, dir
}

// addBundle copies the Konnect operator's bundle of version v into the catalog directory.
func addBundle(t *testing.T, dir, v string) {
	t.Helper()
	if err := os.CopyFS(filepath.Join(dir, "konnect-operator", v), os.DirFS(filepath.Join("..", "..", "bundles", "konnect-operator", v))); err != nil {
		t.Fatal(err)
	}
}

// load (re)loads the catalog directory as the catalog alm-system/konnect.
func load(t *testing.T, reg *registry.Registry, dir, digest string) {
	t.Helper()
	contents, err := fbc.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	reg.Set(types.NamespacedName{Namespace: almNamespace, Name: "konnect"}, 0, contents, digest)
}

// installed creates the OperatorVersion of the catalog's 1.0.0 in ns, Succeeded, as if the install loop had run.
func installed(t *testing.T, c client.Client, reg *registry.Registry, ns string) {
	t.Helper()
	res, err := reg.Index().Resolve(index.Request{Package: "konnect-operator", Range: "<1.1.0"})
	if err != nil || res.Chosen == nil {
		t.Fatalf("resolving 1.0.0: %v %+v", err, res)
	}
	ov, err := res.OperatorVersion(ns)
	if err != nil {
		t.Fatal(err)
	}
	ov.Spec.Source = registry.Reference(res.Chosen.Catalog)
	if err := c.Create(t.Context(), ov); err != nil {
		t.Fatal(err)
	}
	ov.Status.Phase = operatorsv1alpha1.PhaseSucceeded
	if err := c.Status().Update(t.Context(), ov); err != nil {
		t.Fatal(err)
	}
}

// TestManualApprovalShowsThePreviewAndDeprecation: an AppType with approval: Manual whose installed version 1.0.0
// the catalog deprecates shows the offered 1.1.0, the preview of exactly 1.0.0 -> 1.1.0, and Deprecated=True with
// the catalog's message.
func TestManualApprovalShowsThePreviewAndDeprecation(t *testing.T) {
	c := harness.Client(t, cp)
	reg, dir := konnectCatalog(t)
	harness.StartManager(t, cp, func(mgr ctrl.Manager) error {
		return (&apptype.Reconciler{Client: mgr.GetClient(), Registry: reg, Namespace: almNamespace}).SetupWithManager(mgr)
	})
	ns := harness.Namespace(t, c, "apptype-preview")
	installed(t, c, reg, ns)
	at := &operatorsv1alpha1.AppType{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "konnect"},
		Spec: operatorsv1alpha1.AppTypeSpec{Package: "konnect-operator", Approval: operatorsv1alpha1.ApprovalManual}}
	if err := c.Create(t.Context(), at); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 20*time.Second, func() error {
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(at), at); err != nil {
			return err
		}
		return checkPreviewAndDeprecation(at)
	})
	p := at.Status.UpgradePreview
	if len(p.Objects) != 1 || p.Objects[0].Kind != "Deployment" ||
		p.Objects[0].Detail != "container manager: image alm.local/konnect-operator:1.0.0 -> alm.local/konnect-operator:1.1.0" {
		t.Errorf("preview objects %+v", p.Objects)
	}
	if len(p.CRDs) != 1 || p.CRDs[0].Name != "kongroutes.configuration.konghq.com" || p.CRDs[0].Refused != "" {
		t.Errorf("preview CRDs %+v", p.CRDs)
	}
	if len(p.RBACRules) != 0 || len(p.Webhooks) != 0 {
		t.Errorf("preview RBAC rules %+v, webhooks %+v: none change", p.RBACRules, p.Webhooks)
	}
	// kubectl get shows the summary in the Preview column; the status holds the preview itself.
	bin, err := localkube.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(bin, "kubectl"), "--kubeconfig", cp.KubeconfigPath, "get", "apptype", "-n", ns).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PREVIEW") || !strings.Contains(string(out), "~1 Deployment (image), ~1 CRD, 0 refused") {
		t.Errorf("kubectl get apptype: %v\n%s", err, out)
	}
	preview, _ := yaml.Marshal(at.Status.UpgradePreview)
	deprecated, _ := yaml.Marshal(apimeta.FindStatusCondition(at.Status.Conditions, operatorsv1alpha1.ConditionDeprecated))
	t.Logf("kubectl get apptype -n %s:\n%s\nstatus.upgradePreview:\n%s\nDeprecated condition:\n%s", ns, out, preview, deprecated)

	// Approving is naming the previewed version; the upgrade is then under way (the upgradetrigger loop's).
	at.Spec.ApprovedVersion = p.To
	if err := c.Update(t.Context(), at); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, func() error {
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(at), at); err != nil {
			return err
		}
		cond := apimeta.FindStatusCondition(at.Status.Conditions, operatorsv1alpha1.ConditionUpgradeAvailable)
		if cond == nil || cond.Reason != operatorsv1alpha1.ReasonUpgradePending || at.Status.UpgradePreview == nil || at.Status.UpgradePreview.To != "1.1.0" {
			return fmt.Errorf("after approving 1.1.0: UpgradeAvailable %+v, preview %+v", cond, at.Status.UpgradePreview)
		}
		return nil
	})
	// Before the upgrade starts, the catalog offers 1.2.0 instead: the preview follows the offer, and approving
	// 1.1.0 does not approve it.
	addBundle(t, dir, "1.2.0")
	load(t, reg, dir, "v2")
	at.Annotations = map[string]string{"test": "catalog changed"} // the CatalogSource watch's part, which this test has no loop for
	if err := c.Update(t.Context(), at); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 20*time.Second, func() error {
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(at), at); err != nil {
			return err
		}
		cond := apimeta.FindStatusCondition(at.Status.Conditions, operatorsv1alpha1.ConditionUpgradeAvailable)
		p := at.Status.UpgradePreview
		if at.Status.AvailableUpgrade != "1.2.0" || p == nil || p.From != "1.0.0" || p.To != "1.2.0" || !strings.Contains(p.Summary, "(args, image)") ||
			cond == nil || cond.Reason != operatorsv1alpha1.ReasonAwaitingApproval {
			return fmt.Errorf("with 1.2.0 offered: availableUpgrade %q, preview %+v, UpgradeAvailable %+v", at.Status.AvailableUpgrade, p, cond)
		}
		return nil
	})
}

// checkPreviewAndDeprecation says what an AppType that installed 1.0.0 and is offered 1.1.0 does not show yet.
func checkPreviewAndDeprecation(at *operatorsv1alpha1.AppType) error {
	st := at.Status
	upgrade := apimeta.FindStatusCondition(st.Conditions, operatorsv1alpha1.ConditionUpgradeAvailable)
	deprecated := apimeta.FindStatusCondition(st.Conditions, operatorsv1alpha1.ConditionDeprecated)
	switch {
	case st.InstalledVersion != "1.0.0" || st.AvailableUpgrade != "1.1.0":
		return fmt.Errorf("installed %q, availableUpgrade %q; want 1.0.0 and 1.1.0", st.InstalledVersion, st.AvailableUpgrade)
	case upgrade == nil || upgrade.Reason != operatorsv1alpha1.ReasonAwaitingApproval || !strings.Contains(upgrade.Message, "status.upgradePreview"):
		return fmt.Errorf("UpgradeAvailable %+v; want AwaitingApproval pointing at status.upgradePreview", upgrade)
	case st.UpgradePreview == nil || st.UpgradePreview.From != "1.0.0" || st.UpgradePreview.To != st.AvailableUpgrade:
		return fmt.Errorf("upgradePreview %+v; want the preview of 1.0.0 -> %s", st.UpgradePreview, st.AvailableUpgrade)
	case st.UpgradePreview.Summary != "~1 Deployment (image), ~1 CRD, 0 refused":
		return fmt.Errorf("upgradePreview.summary %q", st.UpgradePreview.Summary)
	case deprecated == nil || deprecated.Status != metav1.ConditionTrue || deprecated.Reason != operatorsv1alpha1.ReasonBundleDeprecated ||
		deprecated.Message != "bundle konnect-operator.v1.0.0 deprecated: 1.0.0 has a known bug; upgrade to 1.1.0":
		return fmt.Errorf("Deprecated %+v; want True, BundleDeprecated, with the catalog's message", deprecated)
	}
	return nil
}
