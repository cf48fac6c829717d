package workloads

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/test/harness"
)

// probedDemo is version v of pkg running the tests' operator program (test/testapp, the image alm.local/<pkg>:<v>)
// with a readiness probe on /readyz, probed every second by the kubelet; args are added to its own.
func probedDemo(pkg, v, replaces string, args ...string) harness.Demo {
	d := harness.Demo{Package: pkg, Name: pkg + ".v" + v, Version: v, Namespaced: true, Image: "alm.local/" + pkg + ":" + v,
		Args:  append([]string{"--listen=:8081"}, args...),
		Ports: []corev1.ContainerPort{{Name: "probes", ContainerPort: 8081}},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("probes")}},
			PeriodSeconds: 1, FailureThreshold: 1}}
	if replaces != "" {
		d.Replaces = pkg + ".v" + replaces
	}
	return d
}

// Issue 22, rollback with real pods: 2.0.0 starts, takes over from 1.0.0 (1.0.0 collected), then its process
// stops answering its readiness probe. With spec.rollback: Automatic and rollbackAfter 5s, ALM installs 1.0.0 again
// through the hand-over (objects keep their UIDs), marks 2.0.0 (condition and status.rolledBack), does not offer it
// again, collects 2.0.0 and keeps 1.0.0; a later 2.0.1 that replaces 2.0.0 is offered and installed as usual.
func TestAutomaticRollbackAfterReadinessFails(t *testing.T) {
	const pkg = "rb"
	pushTestApp(t, pkg, "1.0.0", "2.0.0", "2.0.1")
	c := harness.Client(t, cp)
	ns := harness.Namespace(t, c, "rollback")
	logPodsOnFailure(t, ns)
	startALM(t, "all")
	catalogSource(t, c, ns, "ops")
	root := t.TempDir()
	harness.Publish(t, c, harness.WriteBundle(t, root, probedDemo(pkg, "1.0.0", "")), "ops", ns)
	appType(t, c, ns, pkg, func(at *operatorsv1alpha1.AppType) {
		at.Spec.Rollback = operatorsv1alpha1.RollbackAutomatic
		at.Spec.RollbackAfter = &metav1.Duration{Duration: 5 * time.Second}
	})
	waitAppType(t, c, ns, pkg, 2*time.Minute, installed("1.0.0"))
	before := harness.ObjectUIDs(t, c, harness.SharedObjects(ns, pkg))

	// 2.0.0 is ready for 20s after its process starts, long enough to take over; then /readyz answers 503.
	harness.Publish(t, c, harness.WriteBundle(t, root, probedDemo(pkg, "2.0.0", "1.0.0", "--unready-after=20s")), "ops", ns)
	waitAppType(t, c, ns, pkg, time.Minute, installed("2.0.0"))
	v2 := waitOV(t, c, ns, pkg+".v2.0.0", func(ov *operatorsv1alpha1.OperatorVersion) error {
		if ov.Status.TakenOver == nil || ov.Status.TakenOver.From != pkg+".v1.0.0" || !harness.OVGone(t, c, ns, pkg+".v1.0.0") {
			return fmt.Errorf("%s: takenOver %+v; want it to have taken over from %s.v1.0.0, which is collected", ov.Name, ov.Status.TakenOver, pkg)
		}
		return nil
	})
	t.Logf("%s took over from %s at %s", v2.Name, v2.Status.TakenOver.From, v2.Status.TakenOver.At.Format(time.RFC3339))

	// Its readiness fails; ALM notices (Ready=False) and, 5s later, rolls back.
	v2 = waitOV(t, c, ns, pkg+".v2.0.0", func(ov *operatorsv1alpha1.OperatorVersion) error {
		if cond := apimeta.FindStatusCondition(ov.Status.Conditions, operatorsv1alpha1.ConditionReady); cond == nil || cond.Status != metav1.ConditionFalse {
			return fmt.Errorf("%s: Ready %+v, want False once its readiness probe fails", ov.Name, cond)
		}
		return nil
	})
	unready := apimeta.FindStatusCondition(v2.Status.Conditions, operatorsv1alpha1.ConditionReady)
	t.Logf("%s not ready since %s: %s", v2.Name, unready.LastTransitionTime.Format(time.RFC3339), unready.Message)
	at := waitAppType(t, c, ns, pkg, 2*time.Minute, func(at *operatorsv1alpha1.AppType) error {
		if err := installed("1.0.0")(at); err != nil {
			return err
		}
		if cond := apimeta.FindStatusCondition(at.Status.Conditions, operatorsv1alpha1.ConditionRolledBack); cond == nil ||
			cond.Status != metav1.ConditionTrue || cond.Reason != operatorsv1alpha1.ReasonAutomaticRollback {
			return fmt.Errorf("condition RolledBack %+v, want True %s", cond, operatorsv1alpha1.ReasonAutomaticRollback)
		}
		return nil
	})
	back := waitOV(t, c, ns, pkg+".v1.0.0", func(*operatorsv1alpha1.OperatorVersion) error { return nil })
	t.Logf("rollback: not ready at %s -> %s created %s later -> %s Succeeded (AppType Ready) %s after the readiness failure",
		unready.LastTransitionTime.Format(time.RFC3339), back.Name, back.CreationTimestamp.Sub(unready.LastTransitionTime.Time),
		back.Name, time.Since(unready.LastTransitionTime.Time).Round(100*time.Millisecond))
	cond := apimeta.FindStatusCondition(at.Status.Conditions, operatorsv1alpha1.ConditionRolledBack)
	t.Logf("AppType condition RolledBack: %s: %s", cond.Reason, cond.Message)
	if !strings.HasPrefix(cond.Message, pkg+".v2.0.0 was not available for 5s after taking over: ") {
		t.Errorf("RolledBack message %q does not name the version, rollbackAfter and the problem", cond.Message)
	}
	if len(at.Status.RolledBack) != 1 || at.Status.RolledBack[0].Name != pkg+".v2.0.0" || at.Status.RolledBack[0].RolledBackTo != pkg+".v1.0.0" {
		t.Errorf("status.rolledBack %+v, want %s.v2.0.0 rolled back to %s.v1.0.0", at.Status.RolledBack, pkg, pkg)
	}
	if back.Spec.RollbackFrom == nil || back.Spec.RollbackFrom.Name != v2.Name || back.Spec.RollbackFrom.UID != v2.UID {
		t.Errorf("%s: rollbackFrom %+v, want %s (uid %s)", back.Name, back.Spec.RollbackFrom, v2.Name, v2.UID)
	}

	// The hand-over went back: same objects, 1.0.0 owns them, runs 1.0.0's image, and 2.0.0 is collected.
	harness.WaitGone(t, c, v2, time.Minute)
	harness.AssertSameUIDs(t, "the rollback", before, harness.ObjectUIDs(t, c, harness.SharedObjects(ns, pkg)))
	dep := harness.SharedObjects(ns, pkg)["Deployment"]
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(dep), dep); err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(dep); ref == nil || ref.UID != back.UID || len(dep.GetOwnerReferences()) != 1 {
		t.Errorf("Deployment owners %v, want %s (uid %s) alone", dep.GetOwnerReferences(), back.Name, back.UID)
	}
	harness.WaitDeploymentImage(t, c, ns, pkg+"-operator", "alm.local/"+pkg+":1.0.0", time.Second)
	// On the real node, the pod that now answers is 1.0.0's: the deployment controller replaced 2.0.0's unready pod
	// with one of 1.0.0's template, which the kubelet runs and finds ready.
	if err := env.WaitDeploymentAvailable(t.Context(), ns, pkg+"-operator", time.Minute); err != nil {
		t.Fatal(err)
	}
	pod, err := env.RunningPod(t.Context(), ns, pkg+"-operator")
	if err != nil {
		t.Fatal(err)
	}
	if img := pod.Spec.Containers[0].Image; img != "alm.local/"+pkg+":1.0.0" {
		t.Errorf("the Ready pod %s after the rollback runs %s, want alm.local/%s:1.0.0", pod.Name, img, pkg)
	} else {
		t.Logf("after the rollback, pod %s of %s is Ready", pod.Name, img)
	}

	// 2.0.0 is not offered again: the resolution says why, and no version of it is created from now on.
	created := watchCreated(t, ns)
	at = waitAppType(t, c, ns, pkg, 30*time.Second, func(at *operatorsv1alpha1.AppType) error {
		for _, cand := range at.Status.Resolution {
			if cand.Name == pkg+".v2.0.0" && strings.HasPrefix(cand.Reason, "RolledBack: rolled back: "+pkg+".v2.0.0 was not available") {
				return nil
			}
		}
		return fmt.Errorf("resolution %+v does not show %s.v2.0.0 as rolled back", at.Status.Resolution, pkg)
	})
	if at.Status.AvailableUpgrade != "" {
		t.Errorf("availableUpgrade %q after the rollback, want none", at.Status.AvailableUpgrade)
	}
	holds(t, 3*time.Second, func() error {
		if !harness.OVGone(t, c, ns, pkg+".v2.0.0") || harness.OVGone(t, c, ns, pkg+".v1.0.0") {
			return fmt.Errorf("after the rollback: %s.v2.0.0 exists again or %s.v1.0.0 is gone", pkg, pkg)
		}
		return nil
	})

	// A fixed version that replaces 2.0.0 is offered and installed as usual, taking over from 1.0.0.
	harness.Publish(t, c, harness.WriteBundle(t, root, probedDemo(pkg, "2.0.1", "2.0.0")), "ops", ns)
	waitAppType(t, c, ns, pkg, time.Minute, installed("2.0.1"))
	harness.WaitGone(t, c, back, time.Minute)
	if fixed := waitOV(t, c, ns, pkg+".v2.0.1", func(*operatorsv1alpha1.OperatorVersion) error { return nil }); fixed.Status.TakenOver == nil ||
		fixed.Status.TakenOver.From != back.Name {
		t.Errorf("%s took over from %+v, want straight from %s (never through the rolled back 2.0.0)", fixed.Name, fixed.Status.TakenOver, back.Name)
	}
	if names := created(); slices.Contains(names, pkg+".v2.0.0") {
		t.Errorf("OperatorVersions created after the rollback: %v; %s.v2.0.0 was rolled back and must not be installed again", names, pkg)
	}
	harness.AssertSameUIDs(t, "the upgrade to 2.0.1", before, harness.ObjectUIDs(t, c, harness.SharedObjects(ns, pkg)))
}

// watchCreated watches the OperatorVersions of ns from now on until the test ends; the function it returns lists
// the names of those created so far.
func watchCreated(t *testing.T, ns string) func() []string {
	t.Helper()
	wc, err := client.NewWithWatch(cp.Config, client.Options{Scheme: harness.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(t.Context(), &operatorsv1alpha1.OperatorVersionList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	var mu sync.Mutex
	var names []string
	go func() {
		for ev := range w.ResultChan() {
			if ov, ok := ev.Object.(*operatorsv1alpha1.OperatorVersion); ok && ev.Type == watch.Added {
				mu.Lock()
				names = append(names, ov.Name)
				mu.Unlock()
			}
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(names)
	}
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
