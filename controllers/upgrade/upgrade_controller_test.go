package upgrade_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/gc"
	"github.com/almproject/alm/controllers/install"
	"github.com/almproject/alm/controllers/internal/cleanup"
	"github.com/almproject/alm/controllers/internal/installer"
	"github.com/almproject/alm/controllers/internal/ownership"
	"github.com/almproject/alm/controllers/upgrade"
	"github.com/almproject/alm/test/harness"
	"github.com/almproject/alm/test/localkube"
)

var cp *localkube.Cluster

// installTimeout is long: no test here waits for a timeout, and the phases they wait for must hold until the test
// marks a Deployment available, however slow the machine. A failed rollout is reported as the deployment
// controller would (ProgressDeadlineExceeded), which fails a version at once.
const installTimeout = 2 * time.Minute

func TestMain(m *testing.M) {
	os.Exit(localkube.RunTests(m, localkube.Options{
		CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd", "bases")},
	}, &cp))
}

// lifecycle runs the three lifecycle loops: install, upgrade (with adoption) and GC.
func lifecycle(mgr ctrl.Manager) error {
	for _, r := range []interface{ SetupWithManager(ctrl.Manager) error }{
		install.New(mgr, installTimeout, nil), upgrade.New(mgr, installTimeout, nil), gc.New(mgr),
	} {
		if err := r.SetupWithManager(mgr); err != nil {
			return err
		}
	}
	return nil
}

// onlyIn returns a ConfigMap manifest that only one version ships.
func onlyIn(name string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}, "data": map[string]any{"k": "v"}}
}

func install1(t *testing.T, c client.Client, ns string) *operatorsv1alpha1.OperatorVersion {
	t.Helper()
	v1 := harness.Demo{Namespace: ns, Package: ns, Name: "demo.v1.0.0", Version: "1.0.0", ExtraObjects: []map[string]any{onlyIn("only-v1")}}.OperatorVersion()
	if err := c.Create(t.Context(), v1); err != nil {
		t.Fatal(err)
	}
	harness.WaitDeploymentAndMarkAvailable(t, c, ns, ns+"-operator", 20*time.Second)
	return harness.WaitPhase(t, c, ns, v1.Name, operatorsv1alpha1.PhaseSucceeded, 20*time.Second)
}

// objectsOf are the objects a Demo version declares, keyed "Kind ns/name".
// Each test installs the package named like its namespace, so that tests share no CRD.
func objectsOf(ns, ov string, extra ...string) map[string]client.Object {
	pkg := ns
	out := map[string]client.Object{
		"ServiceAccount":     &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pkg + "-operator"}},
		"Deployment":         &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pkg + "-operator"}},
		"Service":            &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pkg + "-metrics"}},
		"ConfigMap":          &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pkg + "-config"}},
		"CRD":                &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "widgets." + pkg + ".example.com"}},
		"Role":               &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: installer.RBACName(ov, pkg+"-operator")}},
		"RoleBinding":        &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: installer.RBACName(ov, pkg+"-operator")}},
		"ClusterRole":        &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: installer.ClusterRBACName(ns, ov, pkg+"-operator")}},
		"ClusterRoleBinding": &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: installer.ClusterRBACName(ns, ov, pkg+"-operator")}},
	}
	for _, name := range extra {
		out["ConfigMap "+name] = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	return out
}

func uids(t *testing.T, c client.Client, objs map[string]client.Object) map[string]types.UID {
	t.Helper()
	out := map[string]types.UID{}
	for k, obj := range objs {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		out[k] = obj.GetUID()
	}
	return out
}

// assertOwnedBy checks that every object carries ov's labels and, when namespaced, a controller reference to ov;
// alone: no other owner (after adoption), else a new version may co-own it (during an upgrade).
func assertOwnedBy(t *testing.T, c client.Client, objs map[string]client.Object, ov *operatorsv1alpha1.OperatorVersion, alone bool) {
	t.Helper()
	for k, obj := range objs {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Errorf("%s: %v", k, err)
			continue
		}
		if !ownership.IsOwnedBy(obj, ov) {
			t.Errorf("%s is labelled for %s, want %s", k, obj.GetLabels()[operatorsv1alpha1.LabelOwner], ov.Name)
		}
		if obj.GetNamespace() == "" {
			continue
		}
		refs := obj.GetOwnerReferences()
		controller := metav1.GetControllerOf(obj)
		if controller == nil || controller.UID != ov.UID || (alone && len(refs) != 1) {
			t.Errorf("%s ownerReferences = %v, want %s as the controller (alone: %v)", k, refs, ov.Name, alone)
		}
	}
}

func TestUpgradeAdoptsAndCollectsTheOldVersion(t *testing.T) {
	c := harness.Client(t, cp)
	harness.StartManager(t, cp, lifecycle)
	ctx := t.Context()
	ns := harness.Namespace(t, c, "upgrade")
	v1 := install1(t, c, ns)
	before := uids(t, c, objectsOf(ns, v1.Name, "only-v1"))

	v2 := harness.Demo{Namespace: ns, Package: ns, Name: "demo.v2.0.0", Version: "2.0.0", Replaces: v1.Name,
		ExtraObjects: []map[string]any{onlyIn("only-v2")}}.OperatorVersion()
	start := time.Now()
	if err := c.Create(ctx, v2); err != nil {
		t.Fatal(err)
	}
	// While v2 rolls out, v1 keeps running and keeps its objects; the shared Deployment is updated in place and
	// co-owned by both versions.
	harness.WaitPhase(t, c, ns, v2.Name, operatorsv1alpha1.PhaseInstalling, 20*time.Second)
	dep := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ns + "-operator"}, dep); err != nil {
		t.Fatal(err)
	}
	if img := dep.Spec.Template.Spec.Containers[0].Image; img != "alm.local/"+ns+":2.0.0" {
		t.Errorf("Deployment image during the upgrade = %s, want the new version's", img)
	}
	if len(dep.OwnerReferences) != 2 {
		t.Errorf("Deployment ownerReferences during the upgrade = %v, want v1 (controller) and v2", dep.OwnerReferences)
	}
	// An object v2 ships unchanged is not written before the hand-over, which adds v2 and removes v1 in one write.
	sa := &corev1.ServiceAccount{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ns + "-operator"}, sa); err != nil {
		t.Fatal(err)
	}
	if len(sa.OwnerReferences) != 1 {
		t.Errorf("ServiceAccount (the same in both versions) ownerReferences during the upgrade = %v, want v1's alone: "+
			"a write of its own to add v2 costs a request per object and upgrade", sa.OwnerReferences)
	}
	if got := harness.WaitPhase(t, c, ns, v1.Name, operatorsv1alpha1.PhaseSucceeded, time.Second); got.Status.ReplacedBy != "" {
		t.Errorf("v1 is marked replaced before v2 succeeded: %+v", got.Status)
	}
	assertOwnedBy(t, c, objectsOf(ns, v1.Name, "only-v1"), v1, false)

	harness.WaitDeploymentAndMarkAvailable(t, c, ns, ns+"-operator", 10*time.Second)
	v2 = harness.WaitPhase(t, c, ns, v2.Name, operatorsv1alpha1.PhaseSucceeded, 20*time.Second)
	harness.WaitGone(t, c, v1, 30*time.Second)
	t.Logf("upgrade: v2 created -> v1 deleted in %s", time.Since(start).Round(time.Millisecond))

	// Everything v2 declares is owned by v2 alone; shared objects kept their UID.
	after := objectsOf(ns, v2.Name, "only-v2")
	assertOwnedBy(t, c, after, v2, true)
	afterUIDs := uids(t, c, after)
	for _, k := range []string{"ServiceAccount", "Deployment", "Service", "ConfigMap", "CRD"} {
		if before[k] != afterUIDs[k] {
			t.Errorf("%s was recreated during the upgrade (UID %s -> %s)", k, before[k], afterUIDs[k])
		}
	}
	// What only v1 had is gone: its ConfigMap and its per-version RBAC.
	for k, obj := range objectsOf(ns, v1.Name, "only-v1") {
		if k == "ConfigMap only-v1" || strings.Contains(k, "Role") {
			harness.WaitGone(t, c, obj, 10*time.Second)
		}
	}
	// With the real garbage collector running, nothing of v2's disappears or is recreated afterwards.
	consistently(t, 5*time.Second, func() error {
		for k, obj := range after {
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			if obj.GetUID() != afterUIDs[k] {
				return fmt.Errorf("%s was recreated", k)
			}
		}
		return nil
	})
}

func TestFailedUpgradeKeepsTheOldVersionAndFailsForward(t *testing.T) {
	c := harness.Client(t, cp)
	harness.StartManager(t, cp, lifecycle)
	ctx := t.Context()
	ns := harness.Namespace(t, c, "fail-forward")
	v1 := install1(t, c, ns)

	// v2's pods never become available: v2 fails, v1 keeps everything.
	v2 := harness.Demo{Namespace: ns, Package: ns, Name: "demo.v2.0.0", Version: "2.0.0", Replaces: v1.Name}.OperatorVersion()
	if err := c.Create(ctx, v2); err != nil {
		t.Fatal(err)
	}
	harness.WaitDeploymentImage(t, c, ns, ns+"-operator", "alm.local/"+ns+":2.0.0", 20*time.Second)
	if err := harness.MarkDeploymentFailed(ctx, c, ns, ns+"-operator", "container manager exited with code 2"); err != nil {
		t.Fatal(err)
	}
	failed := harness.WaitPhase(t, c, ns, v2.Name, operatorsv1alpha1.PhaseFailed, 20*time.Second)
	if failed.Status.Reason != operatorsv1alpha1.ReasonProgressDeadlineExceeded || !strings.Contains(failed.Status.Message, "exited with code 2") {
		t.Errorf("v2 failed with %s: %q; want ProgressDeadlineExceeded with the pods' reason", failed.Status.Reason, failed.Status.Message)
	}
	v1 = harness.WaitPhase(t, c, ns, v1.Name, operatorsv1alpha1.PhaseSucceeded, time.Second)
	assertOwnedBy(t, c, objectsOf(ns, v1.Name, "only-v1"), v1, false)

	// v3 replaces the failed v2: it installs, adopts from v2 and v1, and both are collected.
	v3 := harness.Demo{Namespace: ns, Package: ns, Name: "demo.v3.0.0", Version: "3.0.0", Replaces: v2.Name}.OperatorVersion()
	if err := c.Create(ctx, v3); err != nil {
		t.Fatal(err)
	}
	harness.WaitDeploymentImage(t, c, ns, ns+"-operator", "alm.local/"+ns+":3.0.0", 20*time.Second)
	harness.WaitDeploymentAndMarkAvailable(t, c, ns, ns+"-operator", 10*time.Second)
	v3 = harness.WaitPhase(t, c, ns, v3.Name, operatorsv1alpha1.PhaseSucceeded, 20*time.Second)
	harness.WaitGone(t, c, v2, 30*time.Second)
	harness.WaitGone(t, c, v1, 30*time.Second)
	assertOwnedBy(t, c, objectsOf(ns, v3.Name), v3, true)
}

// Killing the manager at different points of an install and an upgrade, then starting a new one, ends in the same
// state: no duplicate, no lost object.
func TestRestartsConverge(t *testing.T) {
	c := harness.Client(t, cp)
	ctx := t.Context()
	ns := harness.Namespace(t, c, "restarts")

	// Point 1: the install has added its cleanup finalizer, nothing applied yet.
	point := harness.NewCrashPoint(func(obj client.Object, sub string) bool {
		ov, ok := obj.(*operatorsv1alpha1.OperatorVersion)
		return ok && sub == "" && ov.Namespace == ns && ov.Name == "demo.v1.0.0" && slices.Contains(ov.Finalizers, cleanup.Finalizer)
	})
	mgr := harness.StartManager(t, cp, lifecycle, point.Option())
	v1 := harness.Demo{Namespace: ns, Package: ns, Name: "demo.v1.0.0", Version: "1.0.0", ExtraObjects: []map[string]any{onlyIn("only-v1")}}.OperatorVersion()
	if err := c.Create(ctx, v1); err != nil {
		t.Fatal(err)
	}
	waitCrash(t, point, mgr)
	if err := c.Get(ctx, client.ObjectKeyFromObject(v1), v1); err != nil || v1.Status.Phase != "" {
		t.Fatalf("after the crash at the finalizer: phase %q, want none yet (err %v)", v1.Status.Phase, err)
	}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: ns + "-operator"}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the Deployment exists before the install step ran (err %v)", err)
	}

	// Point 2: the upgrade has applied v2's objects and waits for the rollout.
	mgr = harness.StartManager(t, cp, lifecycle)
	harness.WaitDeploymentAndMarkAvailable(t, c, ns, ns+"-operator", 20*time.Second)
	v1 = harness.WaitPhase(t, c, ns, v1.Name, operatorsv1alpha1.PhaseSucceeded, 20*time.Second)
	mgr.Stop()
	point = harness.NewCrashPoint(phaseWritten(ns, "demo.v2.0.0", operatorsv1alpha1.PhaseInstalling))
	mgr = harness.StartManager(t, cp, lifecycle, point.Option())
	v2 := harness.Demo{Namespace: ns, Package: ns, Name: "demo.v2.0.0", Version: "2.0.0", Replaces: v1.Name}.OperatorVersion()
	if err := c.Create(ctx, v2); err != nil {
		t.Fatal(err)
	}
	waitCrash(t, point, mgr)
	harness.WaitDeploymentAndMarkAvailable(t, c, ns, ns+"-operator", 10*time.Second)

	// Point 3: in the middle of adoption — the manager dies after handing over two objects.
	var handed atomic.Int32
	crashed := errors.New("simulated crash")
	var crash *harness.Manager
	// Hand-overs are patches of an object's metadata (labels and ownerReferences move to v2 in one write).
	crash = harness.StartManager(t, cp, lifecycle, harness.WithInterceptor(interceptor.Funcs{
		Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if _, ok := obj.(*metav1.PartialObjectMetadata); ok && obj.GetLabels()[operatorsv1alpha1.LabelOwner] == v2.Name && handed.Add(1) > 2 {
				go crash.Stop()
				return crashed
			}
			return cl.Patch(ctx, obj, patch, opts...)
		},
	}))
	harness.Eventually(t, 30*time.Second, func() error {
		if handed.Load() <= 2 {
			return fmt.Errorf("adoption has handed over %d objects, waiting for the crash point", handed.Load())
		}
		return nil
	})
	crash.Stop()
	if err := c.Get(ctx, client.ObjectKeyFromObject(v1), v1); err != nil {
		t.Fatalf("v1 vanished with the adoption half done: %v", err)
	}

	// A new manager finishes the job.
	harness.StartManager(t, cp, lifecycle)
	v2 = harness.WaitPhase(t, c, ns, v2.Name, operatorsv1alpha1.PhaseSucceeded, 20*time.Second)
	harness.WaitGone(t, c, v1, 30*time.Second)
	assertOwnedBy(t, c, objectsOf(ns, v2.Name), v2, true)
	harness.WaitGone(t, c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "only-v1"}}, 10*time.Second)
	// No duplicates: one Deployment, one ServiceAccount, one Role per version left.
	deps := &appsv1.DeploymentList{}
	roles := &rbacv1.RoleList{}
	for _, l := range []client.ObjectList{deps, roles} {
		if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
	}
	if len(deps.Items) != 1 || len(roles.Items) != 1 {
		t.Errorf("after restarts: %d Deployments and %d Roles, want 1 and 1", len(deps.Items), len(roles.Items))
	}
	ovs := &operatorsv1alpha1.OperatorVersionList{}
	if err := c.List(ctx, ovs, client.InNamespace(ns)); err != nil || len(ovs.Items) != 1 {
		t.Errorf("after restarts: OperatorVersions %v (err %v), want only %s", ovs.Items, err, v2.Name)
	}
}

// phaseWritten matches the status write that moves the OperatorVersion namespace/name to phase.
func phaseWritten(namespace, name string, phase operatorsv1alpha1.OperatorVersionPhase) func(client.Object, string) bool {
	return func(obj client.Object, sub string) bool {
		ov, ok := obj.(*operatorsv1alpha1.OperatorVersion)
		return ok && sub == "status" && ov.Namespace == namespace && ov.Name == name && ov.Status.Phase == phase
	}
}

// waitCrash waits until mgr reaches its crash point, then stops it.
func waitCrash(t *testing.T, point *harness.CrashPoint, mgr *harness.Manager) {
	t.Helper()
	select {
	case <-point.Reached:
	case <-time.After(30 * time.Second):
		t.Fatal("the manager never reached its crash point")
	}
	mgr.Stop()
}

// consistently checks cond every 100ms for d; it fails at the first error.
func consistently(t *testing.T, d time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if err := cond(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
