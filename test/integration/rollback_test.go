package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/test/harness"
)

// uninstall deletes the AppType pkg in ns, waits until its OperatorVersions are gone, then deletes the CRD crdName.
// It runs in t.Cleanup, while ALM still runs (t.Context() is done by then).
func uninstall(t *testing.T, c client.Client, ns, pkg, crdName string) {
	ctx := context.Background()
	at := &operatorsv1alpha1.AppType{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pkg}}
	if err := client.IgnoreNotFound(c.Delete(ctx, at)); err != nil {
		t.Error(err)
		return
	}
	harness.Eventually(t, time.Minute, func() error {
		list := &operatorsv1alpha1.OperatorVersionList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(list.Items) > 0 {
			return fmt.Errorf("%d OperatorVersions left in %s", len(list.Items), ns)
		}
		return nil
	})
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: crdName}}
	if err := client.IgnoreNotFound(c.Delete(ctx, crd)); err != nil {
		t.Error(err)
	}
	harness.WaitGone(t, c, crd, time.Minute)
}

// widget is the Widget ns/name of apiVersion (the kind harness.CRD defines), with a spec its schema accepts.
func widget(ns, name, apiVersion string) *unstructured.Unstructured {
	w := &unstructured.Unstructured{}
	w.SetAPIVersion(apiVersion)
	w.SetKind("Widget")
	w.SetNamespace(ns)
	w.SetName(name)
	_ = unstructured.SetNestedField(w.Object, "small", "spec", "size")
	return w
}

// holds checks cond every 100ms for d; it fails at the first error.
func holds(t *testing.T, d time.Duration, cond func() error) {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err := cond(); err != nil {
			t.Fatal(err)
		}
	}
}

// approve sets the AppType's spec.approvedVersion (approval: Manual).
func approve(t *testing.T, c client.Client, ns, name, version string) {
	t.Helper()
	at := &operatorsv1alpha1.AppType{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, at); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(at.DeepCopy()) // no resourceVersion: the loops write the status meanwhile
	at.Spec.Approval, at.Spec.ApprovedVersion = operatorsv1alpha1.ApprovalManual, version
	if err := c.Patch(t.Context(), at, patch); err != nil {
		t.Fatal(err)
	}
}

// manualUpgrade installs 1.0.0 and 2.0.0 (which replaces it) of pkg in ns with approval: Manual, approving 2.0.0.
func manualUpgrade(t *testing.T, c client.Client, ns, pkg string, v1, v2 harness.Demo) {
	t.Helper()
	root := t.TempDir()
	harness.Publish(t, c, harness.WriteBundle(t, root, v1), "ops", ns)
	appType(t, c, ns, pkg, func(at *operatorsv1alpha1.AppType) { at.Spec.Approval = operatorsv1alpha1.ApprovalManual })
	waitAppType(t, c, ns, pkg, time.Minute, installed("1.0.0"))
	harness.Publish(t, c, harness.WriteBundle(t, root, v2), "ops", ns)
	approve(t, c, ns, pkg, "2.0.0")
	waitAppType(t, c, ns, pkg, time.Minute, installed("2.0.0"))
	harness.WaitGone(t, c, &operatorsv1alpha1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pkg + ".v1.0.0"}}, time.Minute)
}

// Manual rollback: with approval: Manual, approving an older version downgrades to it through the hand-over
// (objects keep their UIDs); the newer version is offered again, awaiting approval, and approving it upgrades again.
// 2.0.0 adds a served version v2 to the CRD but keeps storing v1, so going back to 1.0.0's CRD is safe.
func TestDowngradeByApprovedVersion(t *testing.T) {
	const pkg = "dg"
	c := harness.Client(t, cp)
	harness.RunKubelet(t, c, nil)
	startALM(t, "all")
	ns := harness.Namespace(t, c, "downgrade")
	catalogSource(t, c, ns, "ops")
	manualUpgrade(t, c, ns, pkg, harness.Demo{Package: pkg, Name: pkg + ".v1.0.0", Version: "1.0.0"},
		harness.Demo{Package: pkg, Name: pkg + ".v2.0.0", Version: "2.0.0", Replaces: pkg + ".v1.0.0", CRDVersions: []string{"v1", "v2"}})
	before := harness.ObjectUIDs(t, c, harness.SharedObjects(ns, pkg))

	approve(t, c, ns, pkg, "1.0.0")
	at := waitAppType(t, c, ns, pkg, time.Minute, func(at *operatorsv1alpha1.AppType) error {
		if err := installed("1.0.0")(at); err != nil {
			return err
		}
		cond := apimeta.FindStatusCondition(at.Status.Conditions, operatorsv1alpha1.ConditionUpgradeAvailable)
		if at.Status.AvailableUpgrade != "2.0.0" || cond == nil || cond.Reason != operatorsv1alpha1.ReasonAwaitingApproval {
			return fmt.Errorf("availableUpgrade %q, UpgradeAvailable %+v; want 2.0.0 awaiting approval", at.Status.AvailableUpgrade, cond)
		}
		if rb := apimeta.FindStatusCondition(at.Status.Conditions, operatorsv1alpha1.ConditionRolledBack); rb == nil || rb.Status == metav1.ConditionUnknown {
			return fmt.Errorf("condition RolledBack %+v, want it decided", rb)
		}
		return nil
	})
	cond := apimeta.FindStatusCondition(at.Status.Conditions, operatorsv1alpha1.ConditionRolledBack)
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != operatorsv1alpha1.ReasonDowngraded ||
		!strings.Contains(cond.Message, "spec.approvedVersion 1.0.0 is older than the installed "+pkg+".v2.0.0") {
		t.Errorf("condition RolledBack %+v, want True %s naming approvedVersion", cond, operatorsv1alpha1.ReasonDowngraded)
	} else {
		t.Logf("AppType condition RolledBack: %s: %s", cond.Reason, cond.Message)
	}
	if len(at.Status.RolledBack) != 0 {
		t.Errorf("status.rolledBack %+v after a downgrade the user asked for, want none (2.0.0 stays on offer)", at.Status.RolledBack)
	}
	harness.WaitGone(t, c, &operatorsv1alpha1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pkg + ".v2.0.0"}}, time.Minute)
	harness.AssertSameUIDs(t, "the downgrade", before, harness.ObjectUIDs(t, c, harness.SharedObjects(ns, pkg)))
	harness.WaitDeploymentImage(t, c, ns, pkg+"-operator", "alm.local/"+pkg+":1.0.0", time.Second)

	// Approving 2.0.0 again upgrades again (a new 2.0.0, which replaces the rollback).
	approve(t, c, ns, pkg, "2.0.0")
	waitAppType(t, c, ns, pkg, time.Minute, installed("2.0.0"))
	harness.WaitGone(t, c, &operatorsv1alpha1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pkg + ".v1.0.0"}}, time.Minute)
	harness.AssertSameUIDs(t, "the upgrade after the downgrade", before, harness.ObjectUIDs(t, c, harness.SharedObjects(ns, pkg)))
}

// A downgrade whose CRD would drop a version still in status.storedVersions (2.0.0 stores Widgets as v2; 1.0.0
// knows only v1) is refused with a condition saying so; 2.0.0 keeps running and owning everything.
func TestDowngradeThatDropsAStoredVersionIsRefused(t *testing.T) {
	const pkg = "dgcrd"
	c := harness.Client(t, cp)
	harness.RunKubelet(t, c, nil)
	startALM(t, "all")
	ns := harness.Namespace(t, c, "downgrade-crd")
	catalogSource(t, c, ns, "ops")
	// The CRD (with v2 stored) outlives the namespace; the next run (-count=N) must start without it. While ALM
	// runs: the AppType goes (and its versions), then the CRD, which ALM never deletes.
	t.Cleanup(func() { uninstall(t, c, ns, pkg, "widgets."+pkg+".example.com") })
	manualUpgrade(t, c, ns, pkg, harness.Demo{Package: pkg, Name: pkg + ".v1.0.0", Version: "1.0.0"},
		harness.Demo{Package: pkg, Name: pkg + ".v2.0.0", Version: "2.0.0", Replaces: pkg + ".v1.0.0", CRDVersions: []string{"v2", "v1"}})
	w := widget(ns, "stored-as-v2", pkg+".example.com/v2")
	if err := c.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}

	approve(t, c, ns, pkg, "1.0.0")
	at := waitAppType(t, c, ns, pkg, time.Minute, func(at *operatorsv1alpha1.AppType) error {
		cond := apimeta.FindStatusCondition(at.Status.Conditions, operatorsv1alpha1.ConditionRolledBack)
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != operatorsv1alpha1.ReasonRollbackRefused {
			return fmt.Errorf("condition RolledBack %+v, want False %s", cond, operatorsv1alpha1.ReasonRollbackRefused)
		}
		return nil
	})
	cond := apimeta.FindStatusCondition(at.Status.Conditions, operatorsv1alpha1.ConditionRolledBack)
	t.Logf("AppType condition RolledBack: %s: %s", cond.Reason, cond.Message)
	if !strings.Contains(cond.Message, "removes version v2, which is still in status.storedVersions") {
		t.Errorf("RolledBack message %q does not say which stored version would be dropped", cond.Message)
	}
	holds(t, 2*time.Second, func() error {
		ov := &operatorsv1alpha1.OperatorVersion{}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: pkg + ".v2.0.0"}, ov); err != nil {
			return err
		}
		if ov.Status.Phase != operatorsv1alpha1.PhaseSucceeded || !harness.OVGone(t, c, ns, pkg+".v1.0.0") {
			return fmt.Errorf("%s is %s, or %s.v1.0.0 exists: the refused downgrade must change nothing", ov.Name, ov.Status.Phase, pkg)
		}
		return nil
	})
}

// A narrowed versionRange that excludes the installed version downgrades to the highest older version in it, with
// approval: Automatic too; the newer version is then out of range and not offered.
func TestDowngradeByVersionRange(t *testing.T) {
	const pkg = "dgr"
	c := harness.Client(t, cp)
	harness.RunKubelet(t, c, nil)
	startALM(t, "all")
	ns := harness.Namespace(t, c, "downgrade-range")
	catalogSource(t, c, ns, "ops")
	root := t.TempDir()
	for _, d := range []harness.Demo{
		{Package: pkg, Name: pkg + ".v1.0.0", Version: "1.0.0"},
		{Package: pkg, Name: pkg + ".v1.1.0", Version: "1.1.0", Replaces: pkg + ".v1.0.0"},
	} {
		harness.Publish(t, c, harness.WriteBundle(t, root, d), "ops", ns)
	}
	appType(t, c, ns, pkg)
	waitAppType(t, c, ns, pkg, time.Minute, installed("1.1.0"))
	harness.Publish(t, c, harness.WriteBundle(t, root, harness.Demo{Package: pkg, Name: pkg + ".v2.0.0", Version: "2.0.0", Replaces: pkg + ".v1.1.0"}), "ops", ns)
	waitAppType(t, c, ns, pkg, time.Minute, installed("2.0.0"))
	before := harness.ObjectUIDs(t, c, harness.SharedObjects(ns, pkg))

	at := &operatorsv1alpha1.AppType{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: pkg}, at); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(at.DeepCopy())
	at.Spec.VersionRange = "<2.0.0"
	if err := c.Patch(t.Context(), at, patch); err != nil {
		t.Fatal(err)
	}
	at = waitAppType(t, c, ns, pkg, time.Minute, func(at *operatorsv1alpha1.AppType) error {
		if err := installed("1.1.0")(at); err != nil {
			return err
		}
		if cond := apimeta.FindStatusCondition(at.Status.Conditions, operatorsv1alpha1.ConditionRolledBack); cond == nil ||
			cond.Status != metav1.ConditionTrue || cond.Reason != operatorsv1alpha1.ReasonDowngraded {
			return fmt.Errorf("condition RolledBack %+v, want True %s", cond, operatorsv1alpha1.ReasonDowngraded)
		}
		return nil
	})
	t.Logf("AppType condition RolledBack: %s", apimeta.FindStatusCondition(at.Status.Conditions, operatorsv1alpha1.ConditionRolledBack).Message)
	harness.WaitGone(t, c, &operatorsv1alpha1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pkg + ".v2.0.0"}}, time.Minute)
	harness.AssertSameUIDs(t, "the downgrade", before, harness.ObjectUIDs(t, c, harness.SharedObjects(ns, pkg)))
	if at.Status.AvailableUpgrade != "" {
		t.Errorf("availableUpgrade %q with versionRange <2.0.0, want none", at.Status.AvailableUpgrade)
	}
}
