package install_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/gc"
	"github.com/almproject/alm/controllers/install"
	"github.com/almproject/alm/controllers/internal/installer"
	"github.com/almproject/alm/controllers/internal/ownership"
	"github.com/almproject/alm/test/harness"
	"github.com/almproject/alm/test/localkube"
)

var (
	cp *localkube.Cluster
	c  client.Client
)

// installTimeout is short so that the deadline test is quick. The other tests use patientTimeout: they wait for
// phases that must hold until the test marks a Deployment available, however slow the machine.
const (
	installTimeout = 6 * time.Second
	patientTimeout = 2 * time.Minute
)

func TestMain(m *testing.M) {
	os.Exit(localkube.RunTests(m, localkube.Options{
		CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd", "bases")},
	}, &cp))
}

func setup(t *testing.T) {
	t.Helper()
	setupWithTimeout(t, patientTimeout)
}

// setupWithTimeout starts the Install and GC loops with the given install timeout.
func setupWithTimeout(t *testing.T, timeout time.Duration) {
	t.Helper()
	c = harness.Client(t, cp)
	harness.StartManager(t, cp, func(mgr ctrl.Manager) error {
		if err := install.New(mgr, timeout, nil).SetupWithManager(mgr); err != nil {
			return err
		}
		// The GC loop runs the cleanup finalizer the installer adds.
		return gc.New(mgr).SetupWithManager(mgr)
	})
}

func TestInstallsStrategyAndReportsPhases(t *testing.T) {
	setup(t)
	ctx := t.Context()
	ns := harness.Namespace(t, c, "install-phases")
	// The package (and so its cluster-scoped CRD) is named after the namespace: unique in every run of -count=N.
	pkg := ns
	ov := harness.Demo{Namespace: ns, Name: "demo.v1.0.0", Version: "1.0.0", Package: pkg}.OperatorVersion()
	if err := c.Create(ctx, ov); err != nil {
		t.Fatal(err)
	}
	// Installing until the Deployment is available, with every object created and owned.
	installing := harness.WaitPhase(t, c, ns, ov.Name, operatorsv1alpha1.PhaseInstalling, 30*time.Second)
	if !strings.Contains(installing.Status.Message, "Deployment "+pkg+"-operator") {
		t.Errorf("Installing message %q does not name the Deployment it waits for", installing.Status.Message)
	}
	selector := ownership.Labels(ov)
	for _, obj := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pkg + "-operator"}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: installer.RBACName(ov.Name, pkg+"-operator")}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: installer.RBACName(ov.Name, pkg+"-operator")}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pkg + "-operator"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pkg + "-metrics"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pkg + "-config"}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: installer.ClusterRBACName(ns, ov.Name, pkg+"-operator")}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: installer.ClusterRBACName(ns, ov.Name, pkg+"-operator")}},
		&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "widgets." + pkg + ".example.com"}},
	} {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Fatalf("%T %s: %v", obj, obj.GetName(), err)
		}
		for k, v := range selector {
			if obj.GetLabels()[k] != v {
				t.Errorf("%T %s: label %s=%q, want %q", obj, obj.GetName(), k, obj.GetLabels()[k], v)
			}
		}
		refs := obj.GetOwnerReferences()
		if obj.GetNamespace() == "" {
			if len(refs) != 0 {
				t.Errorf("cluster-scoped %T %s has ownerReferences %v; it must carry labels only", obj, obj.GetName(), refs)
			}
			continue
		}
		if len(refs) != 1 || refs[0].UID != installing.UID || refs[0].Controller == nil || !*refs[0].Controller {
			t.Errorf("%T %s: ownerReferences %v, want one controller reference to %s", obj, obj.GetName(), refs, ov.Name)
		}
	}
	// The ServiceAccount can do what the bundle's permissions say, and no more.
	harness.WaitDeploymentAndMarkAvailable(t, c, ns, pkg+"-operator", 10*time.Second)
	done := harness.WaitPhase(t, c, ns, ov.Name, operatorsv1alpha1.PhaseSucceeded, 30*time.Second)
	if len(done.Status.Owned) != 9 {
		t.Errorf("status.owned lists %d objects, want 9: %v", len(done.Status.Owned), done.Status.Owned)
	}
	// The outcome is an Event (the start of an install is announced by the AppType loop, which this test does not
	// run: at scale every Event is a request).
	harness.Eventually(t, 10*time.Second, func() error {
		got := eventReasons(ctx, ns, ov.Name)
		want := []string{"Succeeded"}
		if !isSubsequence(want, got) {
			return fmt.Errorf("events %v do not go through %v in order", got, want)
		}
		return nil
	})
}

func TestWaitsForRequiredCRD(t *testing.T) {
	setup(t)
	ctx := t.Context()
	ns := harness.Namespace(t, c, "install-required")
	// Cluster-scoped names come from the namespace: a CRD left by an earlier run of -count=N must not meet this one.
	group := ns + ".other.example.com"
	gadgets := "gadgets." + group
	ov := harness.Demo{Namespace: ns, Name: "needy.v1.0.0", Version: "1.0.0", Package: ns,
		RequiredCRDs: []string{gadgets}}.OperatorVersion()
	if err := c.Create(ctx, ov); err != nil {
		t.Fatal(err)
	}
	pending := harness.WaitPhase(t, c, ns, ov.Name, operatorsv1alpha1.PhasePending, 20*time.Second)
	if !strings.Contains(pending.Status.Message, gadgets) {
		t.Errorf("Pending message %q does not name the missing CRD", pending.Status.Message)
	}
	if len(pending.Status.RequirementStatus) != 1 || pending.Status.RequirementStatus[0].Status != "NotPresent" {
		t.Errorf("requirementStatus = %+v, want %s NotPresent", pending.Status.RequirementStatus, gadgets)
	}
	crd := &unstructured.Unstructured{Object: harness.CRD(group, "Gadget", "gadgets")}
	if err := c.Create(ctx, crd); err != nil {
		t.Fatal(err)
	}
	harness.WaitDeploymentAndMarkAvailable(t, c, ns, ns+"-operator", 20*time.Second)
	harness.WaitPhase(t, c, ns, ov.Name, operatorsv1alpha1.PhaseSucceeded, 20*time.Second)
}

func TestFailsWhenDeploymentIsNotAvailableInTime(t *testing.T) {
	setupWithTimeout(t, installTimeout)
	ns := harness.Namespace(t, c, "install-timeout")
	ov := harness.Demo{Namespace: ns, Name: "slow.v1.0.0", Version: "1.0.0", Package: "slow"}.OperatorVersion()
	if err := c.Create(t.Context(), ov); err != nil {
		t.Fatal(err)
	}
	failed := harness.WaitPhase(t, c, ns, ov.Name, operatorsv1alpha1.PhaseFailed, installTimeout+30*time.Second)
	if failed.Status.Reason != operatorsv1alpha1.ReasonInstallTimeout || !strings.Contains(failed.Status.Message, "Deployment slow-operator") {
		t.Errorf("Failed with %s: %q; want InstallTimeout naming Deployment slow-operator", failed.Status.Reason, failed.Status.Message)
	}
	// A Deployment that becomes available later recovers the version.
	harness.WaitDeploymentAndMarkAvailable(t, c, ns, "slow-operator", 10*time.Second)
	harness.WaitPhase(t, c, ns, ov.Name, operatorsv1alpha1.PhaseSucceeded, 30*time.Second)
}

func TestRefusesWhatItCannotInstall(t *testing.T) {
	setup(t)
	ctx := t.Context()
	ns := harness.Namespace(t, c, "install-refuse")
	// An object kind ALM does not install.
	bad := harness.Demo{Namespace: ns, Name: "bad.v1.0.0", Version: "1.0.0", Package: "bad", ExtraObjects: []map[string]any{
		{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "migrate"}},
	}}.OperatorVersion()
	// A ServiceAccount that a user created by hand.
	if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "taken-operator"}}); err != nil {
		t.Fatal(err)
	}
	taken := harness.Demo{Namespace: ns, Name: "taken.v1.0.0", Version: "1.0.0", Package: "taken"}.OperatorVersion()
	for _, ov := range []*operatorsv1alpha1.OperatorVersion{bad, taken} {
		if err := c.Create(ctx, ov); err != nil {
			t.Fatal(err)
		}
	}
	got := harness.WaitPhase(t, c, ns, bad.Name, operatorsv1alpha1.PhaseFailed, 20*time.Second)
	if got.Status.Reason != operatorsv1alpha1.ReasonInvalidStrategy || !strings.Contains(got.Status.Message, "spec.objects[3] is a Job") {
		t.Errorf("bad: %s: %q; want InvalidInstallStrategy naming spec.objects[3] Job", got.Status.Reason, got.Status.Message)
	}
	got = harness.WaitPhase(t, c, ns, taken.Name, operatorsv1alpha1.PhaseFailed, 20*time.Second)
	if got.Status.Reason != installer.ReasonConflict || !strings.Contains(got.Status.Message, "ServiceAccount "+ns+"/taken-operator exists and was not created by ALM") {
		t.Errorf("taken: %s: %q; want ObjectConflict naming the ServiceAccount", got.Status.Reason, got.Status.Message)
	}
	sa := &corev1.ServiceAccount{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "taken-operator"}, sa); err != nil || len(sa.OwnerReferences) != 0 || len(sa.Labels) != 0 {
		t.Errorf("the user's ServiceAccount was touched: %v %v %v", err, sa.OwnerReferences, sa.Labels)
	}
}

func TestRefusesUnsafeCRDUpdate(t *testing.T) {
	setup(t)
	ctx := t.Context()
	ns := harness.Namespace(t, c, "install-crd")
	// v1 of the operator serves and stores widgets in v1alpha1.
	first := harness.Demo{Namespace: ns, Name: "crd.v1.0.0", Version: "1.0.0", Package: "crdsafe", CRDVersions: []string{"v1alpha1"}}.OperatorVersion()
	if err := c.Create(ctx, first); err != nil {
		t.Fatal(err)
	}
	harness.WaitDeploymentAndMarkAvailable(t, c, ns, "crdsafe-operator", 20*time.Second)
	harness.WaitPhase(t, c, ns, first.Name, operatorsv1alpha1.PhaseSucceeded, 20*time.Second)
	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "crdsafe.example.com/v1alpha1", "kind": "Widget",
		"metadata": map[string]any{"namespace": ns, "name": "w1"}, "spec": map[string]any{"size": "large"},
	}}
	harness.Eventually(t, 10*time.Second, func() error { return c.Create(ctx, widget) })

	// Another namespace installs a build whose CRD drops v1alpha1, still in status.storedVersions.
	ns2 := harness.Namespace(t, c, "install-crd-2")
	dropper := harness.Demo{Namespace: ns2, Name: "crd.v2.0.0", Version: "2.0.0", Package: "crdsafe", CRDVersions: []string{"v1"}}.OperatorVersion()
	if err := c.Create(ctx, dropper); err != nil {
		t.Fatal(err)
	}
	got := harness.WaitPhase(t, c, ns2, dropper.Name, operatorsv1alpha1.PhaseFailed, 20*time.Second)
	if got.Status.Reason != operatorsv1alpha1.ReasonCRDUnsafe ||
		!strings.Contains(got.Status.Message, "CRD widgets.crdsafe.example.com") || !strings.Contains(got.Status.Message, "removes version v1alpha1") {
		t.Errorf("%s: %q; want CRDUpdateUnsafe naming the CRD and v1alpha1", got.Status.Reason, got.Status.Message)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: "widgets.crdsafe.example.com"}, crd); err != nil {
		t.Fatal(err)
	}
	if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Name != "v1alpha1" {
		t.Errorf("the CRD was changed despite the refusal: versions %v", crd.Spec.Versions)
	}
}

func TestDeletingRemovesClusterScopedObjects(t *testing.T) {
	setup(t)
	ctx := t.Context()
	ns := harness.Namespace(t, c, "install-delete")
	ov := harness.Demo{Namespace: ns, Name: "gone.v1.0.0", Version: "1.0.0", Package: "gone"}.OperatorVersion()
	if err := c.Create(ctx, ov); err != nil {
		t.Fatal(err)
	}
	harness.WaitDeploymentAndMarkAvailable(t, c, ns, "gone-operator", 20*time.Second)
	harness.WaitPhase(t, c, ns, ov.Name, operatorsv1alpha1.PhaseSucceeded, 20*time.Second)
	if err := c.Delete(ctx, ov); err != nil {
		t.Fatal(err)
	}
	harness.WaitGone(t, c, ov, 30*time.Second)
	name := installer.ClusterRBACName(ns, ov.Name, "gone-operator")
	harness.WaitGone(t, c, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}}, 10*time.Second)
	harness.WaitGone(t, c, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}}, 10*time.Second)
	// Namespaced objects go with the real garbage collector.
	harness.WaitGone(t, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gone-operator"}}, 60*time.Second)
	// The CRD stays: it holds user data.
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: "widgets.gone.example.com"}, crd); err != nil {
		t.Fatalf("the CRD was deleted with the OperatorVersion: %v", err)
	}
}

// An install step that read the version just before its deletion may apply an object after the cleanup removed
// it; the cleanup checks again before it lets the version go, so nothing is left behind.
func TestDeletingCatchesALateApply(t *testing.T) {
	setup(t)
	ctx := t.Context()
	ns := harness.Namespace(t, c, "install-late")
	ov := harness.Demo{Namespace: ns, Name: "late.v1.0.0", Version: "1.0.0", Package: "late"}.OperatorVersion()
	if err := c.Create(ctx, ov); err != nil {
		t.Fatal(err)
	}
	harness.WaitDeploymentAndMarkAvailable(t, c, ns, "late-operator", 20*time.Second)
	harness.WaitPhase(t, c, ns, ov.Name, operatorsv1alpha1.PhaseSucceeded, 20*time.Second)
	name := installer.ClusterRBACName(ns, ov.Name, "late-operator")
	role := &rbacv1.ClusterRole{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, role); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, ov); err != nil {
		t.Fatal(err)
	}
	harness.WaitGone(t, c, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}}, 10*time.Second)
	// The late apply: the same ClusterRole, with the version's labels, right after the cleanup deleted it.
	late := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: role.Labels}, Rules: role.Rules}
	if err := c.Create(ctx, late); err != nil {
		t.Fatal(err)
	}
	harness.WaitGone(t, c, ov, 30*time.Second)
	harness.WaitGone(t, c, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}}, 10*time.Second)
}

func eventReasons(ctx context.Context, namespace, name string) []string {
	list := &eventsv1.EventList{}
	if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil
	}
	slices.SortFunc(list.Items, func(a, b eventsv1.Event) int { return a.EventTime.Compare(b.EventTime.Time) })
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Name == name {
			out = append(out, e.Reason)
		}
	}
	return out
}

func isSubsequence(want, got []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}
