// Package integration tests ALM's loops together on the local control plane with the real garbage collector:
// publishing bundles, declaring AppTypes, upgrades by replaces, manual approval, required CRDs, and managers that
// split the loops between them.
package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/loops"
	"github.com/almproject/alm/test/harness"
	"github.com/almproject/alm/test/localkube"
	"github.com/almproject/alm/test/loopstest"
)

var cp *localkube.Cluster

const almNamespace = "alm-system"

func TestMain(m *testing.M) {
	os.Exit(localkube.RunTests(m, localkube.Options{
		CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd", "bases")},
	}, &cp))
}

func TestAppTypeInstallsNewestFittingAndUpgradesByReplaces(t *testing.T) {
	c := harness.Client(t, cp)
	harness.RunKubelet(t, c, nil)
	startALM(t, "all")
	ns := harness.Namespace(t, c, "story-upgrade")
	catalogSource(t, c, ns, "ops")
	bundles := t.TempDir()
	pkg := "story"
	for _, d := range []harness.Demo{
		{Package: pkg, Name: "story.v1.0.0", Version: "1.0.0"},
		{Package: pkg, Name: "story.v1.1.0", Version: "1.1.0", Replaces: "story.v1.0.0"},
		{Package: pkg, Name: "story.v2.0.0", Version: "2.0.0", Replaces: "story.v1.1.0"},
	} {
		harness.Publish(t, c, harness.WriteBundle(t, bundles, d), "ops", ns)
	}
	// The newest version in range <2.0.0 is installed.
	start := time.Now()
	appType(t, c, ns, pkg, func(at *operatorsv1alpha1.AppType) { at.Spec.VersionRange = "<2.0.0" })
	at := waitAppType(t, c, ns, pkg, 60*time.Second, installed("1.1.0"))
	t.Logf("AppType created -> Succeeded: %s", time.Since(start).Round(time.Millisecond))
	// Once installed, the resolution explains why nothing newer is taken.
	reasons := map[string]string{}
	for _, cand := range at.Status.Resolution {
		reasons[cand.Name] = cand.Reason
	}
	for name, want := range map[string]string{"story.v2.0.0": "OutOfRange", "story.v1.1.0": "Installed", "story.v1.0.0": "NotNewer"} {
		if !strings.HasPrefix(reasons[name], want) {
			t.Errorf("resolution reason of %s = %q, want %s...", name, reasons[name], want)
		}
	}
	ov := &operatorsv1alpha1.OperatorVersion{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "story.v1.1.0"}, ov); err != nil {
		t.Fatal(err)
	}
	if ov.Spec.Source == nil || ov.Spec.Source.Name != "ops" || metav1.GetControllerOf(ov).Name != pkg {
		t.Errorf("OperatorVersion source %v, controller %v; want catalog ops and AppType %s", ov.Spec.Source, metav1.GetControllerOf(ov), pkg)
	}

	// Publishing 1.2.0, which replaces the installed 1.1.0, upgrades within seconds and collects 1.1.0.
	start = time.Now()
	harness.Publish(t, c, harness.WriteBundle(t, bundles, harness.Demo{Package: pkg, Name: "story.v1.2.0", Version: "1.2.0", Replaces: "story.v1.1.0"}), "ops", ns)
	waitAppType(t, c, ns, pkg, 60*time.Second, installed("1.2.0"))
	harness.WaitGone(t, c, ov, 60*time.Second)
	t.Logf("replacing version published -> old version deleted: %s", time.Since(start).Round(time.Millisecond))
}

func TestUnknownPackageInstallsOncePublished(t *testing.T) {
	c := harness.Client(t, cp)
	harness.RunKubelet(t, c, nil)
	startALM(t, "all")
	ns := harness.Namespace(t, c, "story-later")
	catalogSource(t, c, ns, "ops")
	appType(t, c, ns, "later")
	waitAppType(t, c, ns, "later", 30*time.Second, func(at *operatorsv1alpha1.AppType) error {
		cond := apimeta.FindStatusCondition(at.Status.Conditions, operatorsv1alpha1.ConditionResolved)
		if cond == nil || cond.Reason != operatorsv1alpha1.ReasonPackageNotFound || !strings.Contains(cond.Message, `"later"`) {
			return fmt.Errorf("Resolved condition %+v, want PackageNotFound naming the package", cond)
		}
		return nil
	})
	harness.Publish(t, c, harness.WriteBundle(t, t.TempDir(), harness.Demo{Package: "later", Name: "later.v0.1.0", Version: "0.1.0"}), "ops", ns)
	waitAppType(t, c, ns, "later", 60*time.Second, installed("0.1.0"))

	// A channel the package does not have is named in the condition.
	appType(t, c, ns, "later", func(at *operatorsv1alpha1.AppType) { at.Name, at.Spec.Channel = "later-beta", "beta" })
	waitAppType(t, c, ns, "later-beta", 30*time.Second, func(at *operatorsv1alpha1.AppType) error {
		cond := apimeta.FindStatusCondition(at.Status.Conditions, operatorsv1alpha1.ConditionResolved)
		if cond == nil || cond.Reason != operatorsv1alpha1.ReasonChannelNotFound || !strings.Contains(cond.Message, `"beta"`) {
			return fmt.Errorf("Resolved condition %+v, want ChannelNotFound naming the channel", cond)
		}
		return nil
	})
}

func TestManualApprovalHoldsOnlyItsOwnUpgrade(t *testing.T) {
	c := harness.Client(t, cp)
	harness.RunKubelet(t, c, nil)
	startALM(t, "all")
	// The catalog lives in ALM's namespace and serves both namespaces.
	harness.EnsureNamespace(t, c, almNamespace)
	catalogSource(t, c, almNamespace, "shared")
	bundles := t.TempDir()
	harness.Publish(t, c, harness.WriteBundle(t, bundles, harness.Demo{Package: "manual", Name: "manual.v1.0.0", Version: "1.0.0"}), "shared", almNamespace)
	manualNS, autoNS := harness.Namespace(t, c, "story-manual"), harness.Namespace(t, c, "story-auto")
	appType(t, c, manualNS, "manual", func(at *operatorsv1alpha1.AppType) { at.Spec.Approval = operatorsv1alpha1.ApprovalManual })
	appType(t, c, autoNS, "manual")
	waitAppType(t, c, manualNS, "manual", 60*time.Second, installed("1.0.0"))
	waitAppType(t, c, autoNS, "manual", 60*time.Second, installed("1.0.0"))

	harness.Publish(t, c, harness.WriteBundle(t, bundles, harness.Demo{Package: "manual", Name: "manual.v2.0.0", Version: "2.0.0", Replaces: "manual.v1.0.0"}), "shared", almNamespace)
	// The Automatic AppType upgrades; the Manual one shows the upgrade and waits.
	waitAppType(t, c, autoNS, "manual", 60*time.Second, installed("2.0.0"))
	held := waitAppType(t, c, manualNS, "manual", 30*time.Second, func(at *operatorsv1alpha1.AppType) error {
		cond := apimeta.FindStatusCondition(at.Status.Conditions, operatorsv1alpha1.ConditionUpgradeAvailable)
		if at.Status.AvailableUpgrade != "2.0.0" || cond == nil || cond.Reason != operatorsv1alpha1.ReasonAwaitingApproval {
			return fmt.Errorf("availableUpgrade %q, UpgradeAvailable %+v; want 2.0.0 AwaitingApproval", at.Status.AvailableUpgrade, cond)
		}
		return nil
	})
	if held.Status.InstalledVersion != "1.0.0" {
		t.Fatalf("the Manual AppType moved to %s without approval", held.Status.InstalledVersion)
	}
	ovs := &operatorsv1alpha1.OperatorVersionList{}
	if err := c.List(t.Context(), ovs, client.InNamespace(manualNS)); err != nil || len(ovs.Items) != 1 {
		t.Fatalf("OperatorVersions in the Manual namespace: %d (err %v), want only 1.0.0", len(ovs.Items), err)
	}
	// Approving the version upgrades it.
	held.Spec.ApprovedVersion = "2.0.0"
	if err := c.Update(t.Context(), held); err != nil {
		t.Fatal(err)
	}
	waitAppType(t, c, manualNS, "manual", 60*time.Second, installed("2.0.0"))
}

// Required CRD -> CRD created from the catalog -> AppType created for its package -> owning operator installed.
func TestRequiredCRDInstallsItsOwner(t *testing.T) {
	c := harness.Client(t, cp)
	harness.RunKubelet(t, c, nil)
	startALM(t, "all")
	ns := harness.Namespace(t, c, "story-required")
	catalogSource(t, c, ns, "ops")
	bundles := t.TempDir()
	// "database" owns widgets.database.example.com; "app" requires it.
	harness.Publish(t, c, harness.WriteBundle(t, bundles, harness.Demo{Package: "database", Name: "database.v1.0.0", Version: "1.0.0"}), "ops", ns)
	harness.Publish(t, c, harness.WriteBundle(t, bundles, harness.Demo{Package: "app", Name: "app.v1.0.0", Version: "1.0.0",
		RequiredCRDs: []string{"widgets.database.example.com"}}), "ops", ns)
	appType(t, c, ns, "app")

	waitAppType(t, c, ns, "app", 90*time.Second, installed("1.0.0"))
	db := waitAppType(t, c, ns, "database", 60*time.Second, installed("1.0.0"))
	if db.Annotations["operators.alm.dev/created-for-crd"] != "widgets.database.example.com" {
		t.Errorf("AppType database annotations %v, want it created for the CRD", db.Annotations)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(t.Context(), client.ObjectKey{Name: "widgets.database.example.com"}, crd); err != nil {
		t.Fatal(err)
	}
	if crd.Labels[operatorsv1alpha1.LabelOwner] != "database.v1.0.0" {
		t.Errorf("CRD labels %v, want it claimed by database.v1.0.0", crd.Labels)
	}
}

// The catalog loops and the lifecycle loops in two managers converge as one manager does.
func TestTwoManagersSplittingTheLoops(t *testing.T) {
	c := harness.Client(t, cp)
	harness.RunKubelet(t, c, func(d *appsv1.Deployment) bool { return false })
	startALM(t, loops.GroupCatalog)
	startALM(t, loops.GroupLifecycle)
	ns := harness.Namespace(t, c, "story-split")
	catalogSource(t, c, ns, "ops")
	bundles := t.TempDir()
	harness.Publish(t, c, harness.WriteBundle(t, bundles, harness.Demo{Package: "split", Name: "split.v1.0.0", Version: "1.0.0"}), "ops", ns)
	appType(t, c, ns, "split")
	waitAppType(t, c, ns, "split", 60*time.Second, installed("1.0.0"))
	harness.Publish(t, c, harness.WriteBundle(t, bundles, harness.Demo{Package: "split", Name: "split.v2.0.0", Version: "2.0.0", Replaces: "split.v1.0.0"}), "ops", ns)
	waitAppType(t, c, ns, "split", 60*time.Second, installed("2.0.0"))
	harness.WaitGone(t, c, &operatorsv1alpha1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "split.v1.0.0"}}, 60*time.Second)
}

// TestDeletionUnderEveryLoopSelection: with every selection of lifecycle loops that --loops accepts, a deleted
// OperatorVersion goes away with its cluster-scoped objects (its cleanup finalizer is always removed). The catalog
// loops do not take part in deletion, and TestEverySelectionRemovesTheFinalizersItAdds (controllers/loops) checks
// that no accepted selection adds a finalizer it does not remove.
func TestDeletionUnderEveryLoopSelection(t *testing.T) {
	c := harness.Client(t, cp)
	harness.RunKubelet(t, c, nil)
	// Without gc too: the loops that add the cleanup finalizer remove it.
	for _, spec := range []string{"install", "upgrade", "install,upgrade", "all"} {
		t.Run(spec, func(t *testing.T) {
			ns := harness.Namespace(t, c, "delete-"+strings.NewReplacer(",", "-").Replace(spec))
			v1 := harness.Demo{Namespace: ns, Package: ns, Name: "demo.v1.0.0", Version: "1.0.0"}.OperatorVersion()
			target := v1
			if !strings.Contains(spec, "install") && spec != "all" {
				// The upgrade loop installs only versions that replace one: install v1 first with the install loop.
				installing := startALM(t, "install")
				if err := c.Create(t.Context(), v1); err != nil {
					t.Fatal(err)
				}
				harness.WaitPhase(t, c, ns, v1.Name, operatorsv1alpha1.PhaseSucceeded, 30*time.Second)
				installing.Stop()
				target = harness.Demo{Namespace: ns, Package: ns, Name: "demo.v2.0.0", Version: "2.0.0", Replaces: v1.Name}.OperatorVersion()
			}
			startALM(t, spec)
			if err := c.Create(t.Context(), target); err != nil {
				t.Fatal(err)
			}
			harness.WaitPhase(t, c, ns, target.Name, operatorsv1alpha1.PhaseSucceeded, 30*time.Second)
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(target), target); err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(target.Finalizers, "operators.alm.dev/cleanup") {
				t.Fatalf("%s has no cleanup finalizer: the test would prove nothing", target.Name)
			}
			if err := c.Delete(t.Context(), target); err != nil {
				t.Fatal(err)
			}
			harness.WaitGone(t, c, target, 30*time.Second)
			roles := &rbacv1.ClusterRoleList{}
			if err := c.List(t.Context(), roles, client.MatchingLabels{operatorsv1alpha1.LabelOwner: target.Name, operatorsv1alpha1.LabelOwnerNamespace: ns}); err != nil {
				t.Fatal(err)
			}
			if len(roles.Items) != 0 {
				t.Errorf("%d ClusterRoles of the deleted %s are left", len(roles.Items), target.Name)
			}
		})
	}
}

// startALM runs the loops named by spec in the test's process (loopstest.Start), with options changed by mutate.
func startALM(t *testing.T, spec string, mutate ...func(*loops.Options)) *harness.Manager {
	t.Helper()
	return loopstest.Start(t, cp, almNamespace, spec, mutate...)
}

// What the tests declare and wait on, shared with test/workloads.
var (
	catalogSource = loopstest.CatalogSource
	appType       = loopstest.AppType
	waitAppType   = loopstest.WaitAppType
	installed     = loopstest.Installed
	waitOV        = loopstest.WaitOV
)
