package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/image"
	"github.com/almproject/alm/controllers/loops"
	"github.com/almproject/alm/controllers/registry"
	"github.com/almproject/alm/test/harness"
)

// startALM runs every ALM loop in this process against the test's control plane.
func startALM(t *testing.T) {
	t.Helper()
	selected, err := loops.Select("all")
	if err != nil {
		t.Fatal(err)
	}
	opts := loops.Options{Registry: registry.New(), Namespace: "alm-system", InstallTimeout: time.Minute, CatalogResync: 2 * time.Second,
		Bundles: loops.NewBundles(&image.BundleCache{Dir: t.TempDir()}, "alm-system")}
	harness.StartManager(t, cp, func(mgr ctrl.Manager) error {
		for _, l := range selected {
			if err := l.Setup(mgr, opts); err != nil {
				return err
			}
		}
		return nil
	})
}

// TestPublishCreatesSourceAndStatusExplains: publishing to a catalog no CatalogSource serves creates it (and says
// so), so the AppType installs; with --no-create-source it says how instead. `almctl status` then shows, one line
// per AppType, the installed version, its phase and catalog, the upgrade offered and why; `almctl status APPTYPE`
// the resolution reasons, conditions, owned objects and events.
func TestPublishCreatesSourceAndStatusExplains(t *testing.T) {
	c := harness.Client(t, cp)
	harness.RunKubelet(t, c, nil)
	startALM(t)
	env := []string{"KUBECONFIG=" + cp.KubeconfigPath}
	ns := harness.Namespace(t, c, "status")
	bundles := t.TempDir()
	v1 := harness.WriteBundle(t, bundles, harness.Demo{Package: "shop", Name: "shop.v1.0.0", Version: "1.0.0"})
	stdout, stderr, code := run(t, env, "publish", v1, "--catalog", "ops", "-n", ns)
	if code != 0 || !strings.Contains(stdout, "created CatalogSource "+ns+"/ops") {
		t.Fatalf("publish: exit %d, want the CatalogSource created and said so\n%s\n%s", code, stdout, stderr)
	}
	t.Logf("almctl publish:\n%s", stdout)
	at := &almv1alpha1.AppType{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"},
		Spec: almv1alpha1.AppTypeSpec{Package: "shop", Approval: almv1alpha1.ApprovalManual}}
	if err := c.Create(t.Context(), at); err != nil {
		t.Fatal(err)
	}
	harness.WaitPhase(t, c, ns, "shop.v1.0.0", almv1alpha1.PhaseSucceeded, time.Minute)

	// 1.1.0 is offered but waits for approval; the same catalog already has its CatalogSource: nothing created.
	v2 := harness.WriteBundle(t, bundles, harness.Demo{Package: "shop", Name: "shop.v1.1.0", Version: "1.1.0", Replaces: "shop.v1.0.0"})
	if stdout, _, code := run(t, env, "publish", v2, "--catalog", "ops", "-n", ns); code != 0 || strings.Contains(stdout, "CatalogSource") {
		t.Fatalf("second publish: exit %d, want no word of a CatalogSource:\n%s", code, stdout)
	}
	harness.Eventually(t, 30*time.Second, func() error {
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(at), at); err != nil {
			return err
		}
		if !apimeta.IsStatusConditionTrue(at.Status.Conditions, almv1alpha1.ConditionUpgradeAvailable) || at.Status.AvailableUpgrade != "1.1.0" {
			return fmt.Errorf("AppType status %+v: want upgrade 1.1.0 offered", at.Status)
		}
		return nil
	})
	stdout, stderr, code = run(t, env, "status", "-n", ns)
	t.Logf("almctl status -n %s:\n%s", ns, stdout)
	want := []string{"APPTYPE", "INSTALLED", "PHASE", "CATALOG", "UPGRADE", "WHY",
		"shop", "1.0.0", "Succeeded", ns + "/ops", "1.1.0", almv1alpha1.ReasonAwaitingApproval}
	for _, w := range want {
		if code != 0 || !strings.Contains(stdout, w) {
			t.Fatalf("status: exit %d, output lacks %q\n%s\n%s", code, w, stdout, stderr)
		}
	}
	stdout, stderr, code = run(t, env, "status", "shop", "-n", ns)
	t.Logf("almctl status shop -n %s:\n%s", ns, stdout)
	for _, w := range []string{"Installed: shop.v1.0.0 (1.0.0), phase Succeeded", "Upgrade:   1.1.0",
		"Preview:   ~1 Deployment (image), ~1 object, 0 refused (almctl upgrade preview shop -n " + ns + " lists the changes)", "Catalog:   " + ns + "/ops: Ready=True",
		"shop.v1.1.0", "OperatorVersion/shop.v1.0.0", "Deployment.apps", "shop-operator", "Recent events:"} {
		if code != 0 || !strings.Contains(stdout, w) {
			t.Fatalf("status shop: exit %d, output lacks %q\n%s\n%s", code, w, stdout, stderr)
		}
	}
	// The preview of the offered version, and how to approve it.
	stdout, stderr, code = run(t, env, "upgrade", "preview", "shop", "-n", ns)
	t.Logf("almctl upgrade preview shop -n %s:\n%s", ns, stdout)
	for _, w := range []string{"shop 1.0.0 -> 1.1.0: ", "objects:", "RBAC rules:",
		"approve it: kubectl -n " + ns + " patch apptype shop --type merge -p '{\"spec\":{\"approvedVersion\":\"1.1.0\"}}'"} {
		if code != 0 || !strings.Contains(stdout, w) {
			t.Fatalf("upgrade preview shop: exit %d, output lacks %q\n%s\n%s", code, w, stdout, stderr)
		}
	}
	if _, stderr, code := run(t, env, "status", "nothing", "-n", ns); code != 1 || !strings.Contains(stderr, "no AppType nothing in namespace "+ns) {
		t.Errorf("status of a missing AppType: exit %d, %s", code, stderr)
	}

	// --no-create-source: published, nothing created, and the way to create it is shown.
	other := harness.Namespace(t, c, "status-nosource")
	stdout, _, code = run(t, env, "publish", v1, "--catalog", "ops", "-n", other, "--no-create-source")
	if code != 0 || !strings.Contains(stdout, "no CatalogSource "+other+"/ops serves catalog ops") || !strings.Contains(stdout, "kind: CatalogSource") {
		t.Fatalf("publish --no-create-source: exit %d, want how to create the CatalogSource:\n%s", code, stdout)
	}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: other, Name: "ops"}, &almv1alpha1.CatalogSource{}); err == nil {
		t.Errorf("--no-create-source created a CatalogSource")
	}
}
