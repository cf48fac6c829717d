package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/test/harness"
)

// handoffDemo is version v of a namespaced test operator; handoff is its CSV's operators.alm.dev/handoff.
func handoffDemo(pkg, v, replaces, handoff string) harness.Demo {
	d := harness.Demo{Package: pkg, Name: pkg + ".v" + v, Version: v, Namespaced: true, Handoff: handoff}
	if replaces != "" {
		d.Replaces = pkg + ".v" + replaces
	}
	return d
}

// A version that takes part in its upgrade: once it has Succeeded, ALM records what it is to take over and waits;
// the old version keeps owning everything until the new operator reports the hand-over done, with its own
// ServiceAccount, which may write that status and no other; then ownership moves and the old version is collected.
func TestHandoffBeforeOwnershipMoves(t *testing.T) {
	c := harness.Client(t, cp)
	harness.RunKubelet(t, c, nil)
	startALM(t, "all")
	ns := harness.Namespace(t, c, "handoff")
	catalogSource(t, c, ns, "ops")
	bundles, pkg := t.TempDir(), "ho"
	harness.Publish(t, c, harness.WriteBundle(t, bundles, handoffDemo(pkg, "1.0.0", "", "")), "ops", ns)
	appType(t, c, ns, pkg)
	waitAppType(t, c, ns, pkg, 60*time.Second, installed("1.0.0"))
	harness.Publish(t, c, harness.WriteBundle(t, bundles, handoffDemo(pkg, "2.0.0", "1.0.0", "10m")), "ops", ns)

	handOver(t, c, ns, pkg)
}

// The same from bundle images, as a real catalog serves them: the annotation comes from the catalog's
// olm.csv.metadata, the operator's rule from the install strategy in the bundle image.
func TestHandoffFromBundleImages(t *testing.T) {
	c := harness.Client(t, cp)
	harness.RunKubelet(t, c, nil)
	startALM(t, "all")
	ns := harness.Namespace(t, c, "handoff-images")
	r := harness.NewRegistry(t)
	dir, pkg := t.TempDir(), "hi"
	harness.WriteBundle(t, dir, handoffDemo(pkg, "1.0.0", "", ""))
	r.PushCatalog(t, map[string][]byte{pkg + "/catalog.json": r.ImageCatalog(t, dir)}, "catalogs/ops:latest")
	imageCatalog(t, c, r, ns, "ops", "catalogs/ops:latest")
	appType(t, c, ns, pkg)
	waitAppType(t, c, ns, pkg, 90*time.Second, installed("1.0.0"))
	harness.WriteBundle(t, dir, handoffDemo(pkg, "2.0.0", "1.0.0", "10m"))
	r.PushCatalog(t, map[string][]byte{pkg + "/catalog.json": r.ImageCatalog(t, dir)}, "catalogs/ops:latest")
	handOver(t, c, ns, pkg)
}

// handOver waits until version 2.0.0 of pkg has Succeeded with a hand-over requested from 1.0.0, which keeps owning
// everything; then it answers as the operator's ServiceAccount (which may not write 1.0.0's status) and waits until
// 2.0.0 owns everything and 1.0.0 is gone.
func handOver(t *testing.T, c client.Client, ns, pkg string) {
	t.Helper()
	v2 := waitOV(t, c, ns, pkg+".v2.0.0", func(ov *operatorsv1alpha1.OperatorVersion) error {
		cond := apimeta.FindStatusCondition(ov.Status.Conditions, operatorsv1alpha1.ConditionHandoff)
		if ov.Status.Phase != operatorsv1alpha1.PhaseSucceeded || ov.Status.Handoff == nil || ov.Status.Handoff.From != pkg+".v1.0.0" ||
			len(ov.Status.Handoff.Objects) == 0 || cond == nil || cond.Reason != operatorsv1alpha1.ReasonHandoffRequested {
			return fmt.Errorf("%s: phase %s, handoff %+v, condition %v; want Succeeded with a hand-over requested from %s.v1.0.0",
				ov.Name, ov.Status.Phase, ov.Status.Handoff, cond, pkg)
		}
		return nil
	})
	logYAML(t, "kubectl get ov "+v2.Name+" -o yaml (status.handoff)", v2.Status.Handoff)
	assertOldKeepsOwning(t, c, ns, pkg)
	// The operator learns which OperatorVersion it runs as from its environment, as OLM's OPERATOR_CONDITION_NAME.
	if env := operatorEnv(t, c, ns, pkg+"-operator"); env["OPERATOR_VERSION_NAME"] != v2.Name || env["OPERATOR_VERSION_NAMESPACE"] != ns {
		t.Errorf("the operator's environment = %v, want OPERATOR_VERSION_NAME=%s and OPERATOR_VERSION_NAMESPACE=%s", env, v2.Name, ns)
	}

	// The new operator answers, as its own ServiceAccount: it may write its own version's status, not the old one's.
	cfg, err := cp.ServiceAccountConfig(t.Context(), ns, pkg+"-operator")
	if err != nil {
		t.Fatal(err)
	}
	operator, err := client.New(cfg, client.Options{Scheme: harness.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	done := client.RawPatch(types.MergePatchType, []byte(`{"status":{"handoff":{"completed":true}}}`))
	old := &operatorsv1alpha1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pkg + ".v1.0.0"}}
	if err := operator.Status().Patch(t.Context(), old, done); !apierrors.IsForbidden(err) {
		t.Errorf("the operator's ServiceAccount patched %s's status (err %v); it may write only its own version's", old.Name, err)
	}
	if err := operator.Status().Patch(t.Context(), v2, done); err != nil {
		t.Fatalf("the operator reports the hand-over done: %v", err)
	}
	waitAppType(t, c, ns, pkg, 60*time.Second, installed("2.0.0"))
	harness.WaitGone(t, c, old, 60*time.Second)
	waitOV(t, c, ns, pkg+".v2.0.0", func(ov *operatorsv1alpha1.OperatorVersion) error {
		if !apimeta.IsStatusConditionTrue(ov.Status.Conditions, operatorsv1alpha1.ConditionHandoff) {
			return fmt.Errorf("%s: %s is not True", ov.Name, operatorsv1alpha1.ConditionHandoff)
		}
		return nil
	})
}

// An operator that does not answer in time fails its version; the old one keeps owning and running everything, and
// a later version replaces the failed one (fail forward).
func TestHandoffTimeoutKeepsTheOldVersion(t *testing.T) {
	c := harness.Client(t, cp)
	harness.RunKubelet(t, c, nil)
	startALM(t, "all")
	ns := harness.Namespace(t, c, "handoff-timeout")
	catalogSource(t, c, ns, "ops")
	bundles, pkg := t.TempDir(), "ht"
	harness.Publish(t, c, harness.WriteBundle(t, bundles, handoffDemo(pkg, "1.0.0", "", "")), "ops", ns)
	appType(t, c, ns, pkg)
	waitAppType(t, c, ns, pkg, 60*time.Second, installed("1.0.0"))
	harness.Publish(t, c, harness.WriteBundle(t, bundles, handoffDemo(pkg, "2.0.0", "1.0.0", "2s")), "ops", ns)

	v2 := waitOV(t, c, ns, pkg+".v2.0.0", func(ov *operatorsv1alpha1.OperatorVersion) error {
		if ov.Status.Phase != operatorsv1alpha1.PhaseFailed || ov.Status.Reason != operatorsv1alpha1.ReasonHandoffTimedOut {
			return fmt.Errorf("%s is %s %s, want Failed %s", ov.Name, ov.Status.Phase, ov.Status.Reason, operatorsv1alpha1.ReasonHandoffTimedOut)
		}
		return nil
	})
	t.Logf("%s: %s", v2.Name, v2.Status.Message)
	if !strings.Contains(v2.Status.Message, pkg+".v1.0.0 keeps owning and running everything") {
		t.Errorf("message %q does not say the old version keeps everything", v2.Status.Message)
	}
	assertOldKeepsOwning(t, c, ns, pkg)

	harness.Publish(t, c, harness.WriteBundle(t, bundles, handoffDemo(pkg, "3.0.0", "2.0.0", "")), "ops", ns)
	waitAppType(t, c, ns, pkg, 90*time.Second, installed("3.0.0"))
}

// assertOldKeepsOwning checks that version 1.0.0 of pkg is still Succeeded, not replaced, and the controller of the
// operator's Deployment.
func assertOldKeepsOwning(t *testing.T, c client.Client, ns, pkg string) {
	t.Helper()
	old := &operatorsv1alpha1.OperatorVersion{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: pkg + ".v1.0.0"}, old); err != nil {
		t.Fatal(err)
	}
	if old.Status.Phase != operatorsv1alpha1.PhaseSucceeded || old.Status.ReplacedBy != "" {
		t.Errorf("%s is %s, replaced by %q; want it Succeeded and owning until the hand-over", old.Name, old.Status.Phase, old.Status.ReplacedBy)
	}
	d := &appsv1.Deployment{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: pkg + "-operator"}, d); err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(d); ref == nil || ref.Name != old.Name {
		t.Errorf("Deployment %s is controlled by %v, want %s until the hand-over", d.Name, ref, old.Name)
	}
}

// operatorEnv is the environment of the first container of the Deployment name (the literal values).
func operatorEnv(t *testing.T, c client.Client, ns, name string) map[string]string {
	t.Helper()
	dep := &appsv1.Deployment{}
	if err := c.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: name}, dep); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, v := range dep.Spec.Template.Spec.Containers[0].Env {
		env[v.Name] = v.Value
	}
	return env
}
