package integration

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/metrics"
	"github.com/almproject/alm/test/harness"
	"github.com/almproject/alm/test/metricstest"
)

// wavesFleet is n installs of one package, each in a namespace of its own, following one CatalogSource in ALM's
// namespace with a rollout policy.
type wavesFleet struct {
	pkg, catalog, root string
	// namespaces in wave order (by name: the policy's canary count takes the first).
	namespaces []string
}

// wavesPolicy is the policy: a canary of 1, then up to 25% of the installs, then the rest; soak as given.
func wavesPolicy(soak time.Duration) *operatorsv1alpha1.RolloutPolicy {
	return &operatorsv1alpha1.RolloutPolicy{Canary: &operatorsv1alpha1.RolloutCanary{Count: ptr.To[int32](1)},
		Waves: []intstr.IntOrString{intstr.FromString("25%")}, Soak: &metav1.Duration{Duration: soak}}
}

// newWavesFleet publishes pkg 1.0.0 to a new CatalogSource with policy p and installs it n times, each AppType with
// rollback: Automatic (rollbackAfter 1s) and changed by mutate(i, at); it waits until all run 1.0.0.
func newWavesFleet(t *testing.T, c client.Client, pkg string, n int, p *operatorsv1alpha1.RolloutPolicy,
	mutate func(int, *operatorsv1alpha1.AppType)) *wavesFleet {
	t.Helper()
	harness.EnsureNamespace(t, c, almNamespace)
	f := &wavesFleet{pkg: pkg, catalog: "waves-" + pkg, root: t.TempDir()}
	cs := &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: almNamespace, Name: f.catalog},
		Spec: operatorsv1alpha1.CatalogSourceSpec{ConfigMap: &operatorsv1alpha1.ConfigMapSource{}, Rollout: p}}
	if err := c.Create(t.Context(), cs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), cs) })
	f.publish(t, c, "1.0.0", "", "")
	for i := range n {
		ns := harness.Namespace(t, c, fmt.Sprintf("%s-%02d", pkg, i))
		f.namespaces = append(f.namespaces, ns)
		appType(t, c, ns, pkg, func(at *operatorsv1alpha1.AppType) {
			at.Spec.Source, at.Spec.SourceNamespace = f.catalog, almNamespace
			at.Spec.Rollback, at.Spec.RollbackAfter = operatorsv1alpha1.RollbackAutomatic, &metav1.Duration{Duration: time.Second}
			if mutate != nil {
				mutate(i, at)
			}
		})
	}
	f.waitAll(t, c, "1.0.0", nil)
	return f
}

// publish publishes version v of the fleet's package, replacing replaces (a version) and with skipRange.
func (f *wavesFleet) publish(t *testing.T, c client.Client, v, replaces, skipRange string) {
	t.Helper()
	d := harness.Demo{Package: f.pkg, Name: f.pkg + ".v" + v, Version: v, SkipRange: skipRange}
	if replaces != "" {
		d.Replaces = f.pkg + ".v" + replaces
	}
	harness.Publish(t, c, harness.WriteBundle(t, f.root, d), f.catalog, almNamespace)
}

// waitAll waits until every install but those in except runs version v.
func (f *wavesFleet) waitAll(t *testing.T, c client.Client, v string, except map[string]bool) {
	t.Helper()
	for _, ns := range f.namespaces {
		if !except[ns] {
			waitAppType(t, c, ns, f.pkg, 2*time.Minute, installed(v))
		}
	}
}

// rollout waits until the CatalogSource's rollout of version v passes check, and returns it.
func (f *wavesFleet) rollout(t *testing.T, c client.Client, v string, check func(*operatorsv1alpha1.RolloutStatus) error) *operatorsv1alpha1.RolloutStatus {
	t.Helper()
	var got *operatorsv1alpha1.RolloutStatus
	harness.Eventually(t, 2*time.Minute, func() error {
		cs := &operatorsv1alpha1.CatalogSource{}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: almNamespace, Name: f.catalog}, cs); err != nil {
			return err
		}
		for i := range cs.Status.Rollouts {
			if ro := &cs.Status.Rollouts[i]; ro.Package == f.pkg && ro.Version == v {
				got = ro
				return check(ro)
			}
		}
		return fmt.Errorf("no rollout of %s %s in status.rollouts %+v", f.pkg, v, cs.Status.Rollouts)
	})
	return got
}

// untouched checks, for 3s, that no install in namespaces has an OperatorVersion of version v and that each
// still runs version running.
func (f *wavesFleet) untouched(t *testing.T, c client.Client, namespaces []string, v, running string) {
	t.Helper()
	holds(t, 3*time.Second, func() error {
		for _, ns := range namespaces {
			if !harness.OVGone(t, c, ns, f.pkg+".v"+v) {
				return fmt.Errorf("%s: %s.v%s was created although the rollout is halted", ns, f.pkg, v)
			}
			at := &operatorsv1alpha1.AppType{}
			if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: f.pkg}, at); err != nil {
				return err
			}
			if err := installed(running)(at); err != nil {
				return err
			}
		}
		return nil
	})
}

func halted(ro *operatorsv1alpha1.RolloutStatus) error {
	if ro.Phase != operatorsv1alpha1.RolloutHalted || ro.Halt == nil {
		return fmt.Errorf("rollout %s %s is %s (halt %+v), want Halted", ro.Package, ro.Version, ro.Phase, ro.Halt)
	}
	return nil
}

func complete(ro *operatorsv1alpha1.RolloutStatus) error {
	if ro.Phase != operatorsv1alpha1.RolloutComplete {
		return fmt.Errorf("rollout %s %s is %s in wave %d of %d (%d upgraded), want Complete", ro.Package, ro.Version, ro.Phase, ro.Wave, ro.Waves, ro.Upgraded)
	}
	return nil
}

// (a) A version that fails in the first wave: the canary takes over, then its Deployment fails its progress
// deadline during the soak. The rollout halts naming the canary and why, the canary rolls back (spec.rollback:
// Automatic, as without waves), and the 19 others never get the new OperatorVersion.
func TestWavesCanaryFailureHaltsTheRollout(t *testing.T) {
	c := harness.Client(t, cp)
	harness.RunKubelet(t, c, nil)
	startALM(t, "all")
	f := newWavesFleet(t, c, "wva", 20, wavesPolicy(time.Minute), nil)
	canary, others := f.namespaces[0], f.namespaces[1:]

	f.publish(t, c, "2.0.0", "1.0.0", "")
	waitOV(t, c, canary, f.pkg+".v2.0.0", func(ov *operatorsv1alpha1.OperatorVersion) error {
		if ov.Status.Phase != operatorsv1alpha1.PhaseSucceeded || ov.Status.TakenOver == nil {
			return fmt.Errorf("%s is %s, takenOver %v: want it Succeeded and taken over", ov.Name, ov.Status.Phase, ov.Status.TakenOver)
		}
		return nil
	})
	f.rollout(t, c, "2.0.0", func(ro *operatorsv1alpha1.RolloutStatus) error {
		if ro.Phase != operatorsv1alpha1.RolloutSoaking || ro.Wave != 1 {
			return fmt.Errorf("rollout is %s in wave %d, want Soaking in wave 1", ro.Phase, ro.Wave)
		}
		return nil
	})
	if err := harness.MarkDeploymentFailed(t.Context(), c, canary, f.pkg+"-operator", "pods crash"); err != nil {
		t.Fatal(err)
	}

	ro := f.rollout(t, c, "2.0.0", halted)
	t.Logf("rollout halted: wave %d of %d, install %s: %s: %s", ro.Wave, ro.Waves, ro.Halt.Install, ro.Halt.Reason, ro.Halt.Message)
	if ro.Halt.Install != canary+"/"+f.pkg || ro.Wave != 1 || ro.Halt.Reason == "" {
		t.Errorf("halt %+v in wave %d, want install %s/%s in wave 1 with a reason", ro.Halt, ro.Wave, canary, f.pkg)
	}
	// The canary rolls back as it would without waves.
	at := waitAppType(t, c, canary, f.pkg, time.Minute, func(at *operatorsv1alpha1.AppType) error {
		if err := installed("1.0.0")(at); err != nil {
			return err
		}
		if cond := apimeta.FindStatusCondition(at.Status.Conditions, operatorsv1alpha1.ConditionRolledBack); cond == nil ||
			cond.Status != metav1.ConditionTrue || cond.Reason != operatorsv1alpha1.ReasonAutomaticRollback {
			return fmt.Errorf("condition RolledBack %+v, want True %s", cond, operatorsv1alpha1.ReasonAutomaticRollback)
		}
		return nil
	})
	t.Logf("canary: %s", apimeta.FindStatusCondition(at.Status.Conditions, operatorsv1alpha1.ConditionRolledBack).Message)
	// The others stay on 1.0.0 and never had 2.0.0 created; their AppTypes say why.
	f.untouched(t, c, others, "2.0.0", "1.0.0")
	for _, ns := range append([]string{canary}, others...) {
		waitAppType(t, c, ns, f.pkg, 30*time.Second, func(at *operatorsv1alpha1.AppType) error {
			cond := apimeta.FindStatusCondition(at.Status.Conditions, operatorsv1alpha1.ConditionRolloutHalted)
			if cond == nil || cond.Status != metav1.ConditionTrue || !strings.Contains(cond.Message, "install "+canary+"/"+f.pkg+" failed: "+ro.Halt.Reason) {
				return fmt.Errorf("%s: condition RolloutHalted %+v, want True naming %s/%s and %s", ns, cond, canary, f.pkg, ro.Halt.Reason)
			}
			return nil
		})
	}
	waitMetric(t, 30*time.Second, func(fams metricstest.Families) error {
		return fams.Equal(metrics.NameRolloutHalted, map[string]string{"package": f.pkg, "version": "2.0.0"}, 1)
	})
}

// creations records, from a watch, when each OperatorVersion named name was created and when it took over.
type creations struct {
	mu             sync.Mutex
	created, taken map[string]time.Time // by namespace
	order          []string
}

func watchCreations(t *testing.T, name string) *creations {
	t.Helper()
	wc, err := client.NewWithWatch(cp.Config, client.Options{Scheme: harness.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(t.Context(), &operatorsv1alpha1.OperatorVersionList{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	rec := &creations{created: map[string]time.Time{}, taken: map[string]time.Time{}}
	go func() {
		for ev := range w.ResultChan() {
			ov, ok := ev.Object.(*operatorsv1alpha1.OperatorVersion)
			if !ok || ov.Name != name || ev.Type == watch.Deleted {
				continue
			}
			rec.mu.Lock()
			if _, seen := rec.created[ov.Namespace]; !seen {
				rec.created[ov.Namespace] = time.Now()
				rec.order = append(rec.order, ov.Namespace)
			}
			if _, seen := rec.taken[ov.Namespace]; !seen && ov.Status.TakenOver != nil {
				rec.taken[ov.Namespace] = time.Now()
			}
			rec.mu.Unlock()
		}
	}()
	return rec
}

// (b) A good version reaches all 20 installs, wave by wave as the policy says: the canary first, alone; then 4 more
// (25% of 20) once it took over and soaked; then the other 15 once those soaked.
func TestWavesGoodVersionReachesAllInOrder(t *testing.T) {
	const soak = 2 * time.Second
	c := harness.Client(t, cp)
	harness.RunKubelet(t, c, nil)
	startALM(t, "all")
	f := newWavesFleet(t, c, "wvb", 20, wavesPolicy(soak), nil)
	rec := watchCreations(t, f.pkg+".v2.0.0")

	start := time.Now()
	f.publish(t, c, "2.0.0", "1.0.0", "")
	f.waitAll(t, c, "2.0.0", nil)
	t.Logf("publish -> 20 installs on 2.0.0: %s", time.Since(start).Round(time.Millisecond))
	ro := f.rollout(t, c, "2.0.0", complete)
	if ro.Upgraded != 20 || ro.Waves != 3 {
		t.Errorf("rollout %+v, want 20 upgraded in 3 waves", ro)
	}

	rec.mu.Lock()
	defer rec.mu.Unlock()
	t.Logf("wave starts, in order: %v", rec.order)
	waves := [][]string{f.namespaces[:1], f.namespaces[1:5], f.namespaces[5:]}
	seen := 0
	for k, wave := range waves {
		got := slices.Clone(rec.order[seen : seen+len(wave)])
		sort.Strings(got)
		if !slices.Equal(got, wave) {
			t.Fatalf("wave %d upgraded %v, want %v (creation order %v)", k+1, got, wave, rec.order)
		}
		seen += len(wave)
		if k == 0 {
			continue
		}
		// Every install of wave k+1 was created after every install of wave k took over and soaked (times of
		// the status are in seconds, hence the second's slack).
		var lastTaken time.Time
		for _, ns := range waves[k-1] {
			if rec.taken[ns].After(lastTaken) {
				lastTaken = rec.taken[ns]
			}
		}
		for _, ns := range wave {
			if gap := rec.created[ns].Sub(lastTaken); gap < soak-time.Second {
				t.Errorf("wave %d: %s created %s after wave %d had taken over, want at least the soak (%s)", k+1, ns, gap, k, soak)
			}
		}
	}
}

// (c) A newer version published after a halted one resumes the rollout: 2.0.0 fails on the canary before it takes
// over (the others keep 1.0.0); 3.0.0, which skips 2.0.0, goes out in waves again and reaches all 20.
func TestWavesNewerVersionResumesAfterAHalt(t *testing.T) {
	c := harness.Client(t, cp)
	var canary string
	harness.RunKubelet(t, c, func(d *appsv1.Deployment) bool {
		return d.Namespace == canary && strings.HasSuffix(d.Spec.Template.Spec.Containers[0].Image, ":2.0.0")
	})
	startALM(t, "all")
	f := newWavesFleet(t, c, "wvc", 20, wavesPolicy(time.Second), nil)
	canary = f.namespaces[0]

	f.publish(t, c, "2.0.0", "1.0.0", "")
	harness.WaitDeploymentImage(t, c, canary, f.pkg+"-operator", "alm.local/"+f.pkg+":2.0.0", time.Minute)
	if err := harness.MarkDeploymentFailed(t.Context(), c, canary, f.pkg+"-operator", "pods crash"); err != nil {
		t.Fatal(err)
	}
	harness.WaitPhase(t, c, canary, f.pkg+".v2.0.0", operatorsv1alpha1.PhaseFailed, time.Minute)
	ro := f.rollout(t, c, "2.0.0", halted)
	t.Logf("2.0.0 halted: install %s: %s: %s", ro.Halt.Install, ro.Halt.Reason, ro.Halt.Message)
	if ro.Halt.Install != canary+"/"+f.pkg || ro.Halt.Reason != operatorsv1alpha1.ReasonProgressDeadlineExceeded {
		t.Errorf("halt %+v, want %s/%s with %s", ro.Halt, canary, f.pkg, operatorsv1alpha1.ReasonProgressDeadlineExceeded)
	}
	f.untouched(t, c, f.namespaces[1:], "2.0.0", "1.0.0")

	f.publish(t, c, "3.0.0", "2.0.0", ">=1.0.0 <3.0.0")
	f.waitAll(t, c, "3.0.0", nil)
	f.rollout(t, c, "3.0.0", complete)
	for _, ns := range f.namespaces {
		at := waitAppType(t, c, ns, f.pkg, 30*time.Second, func(at *operatorsv1alpha1.AppType) error {
			if cond := apimeta.FindStatusCondition(at.Status.Conditions, operatorsv1alpha1.ConditionRolloutHalted); cond != nil {
				return fmt.Errorf("%s: condition RolloutHalted %+v after 3.0.0 went out, want none", ns, cond)
			}
			return nil
		})
		if ns != canary && !harness.OVGone(t, c, ns, f.pkg+".v2.0.0") {
			t.Errorf("%s: %s has a 2.0.0 (installed %s)", ns, f.pkg, at.Status.InstalledVersion)
		}
	}
}

// (d) Manual approval wins over the policy: an AppType with approval: Manual in wave 2 stays on 1.0.0 when its
// wave comes and after the rollout completes (held), until spec.approvedVersion names 2.0.0.
func TestWavesManualApprovalHoldsItsInstall(t *testing.T) {
	const manual = 2
	c := harness.Client(t, cp)
	harness.RunKubelet(t, c, nil)
	startALM(t, "all")
	f := newWavesFleet(t, c, "wvd", 20, wavesPolicy(time.Second), func(i int, at *operatorsv1alpha1.AppType) {
		if i == manual {
			at.Spec.Approval = operatorsv1alpha1.ApprovalManual
		}
	})
	held := f.namespaces[manual]

	f.publish(t, c, "2.0.0", "1.0.0", "")
	f.waitAll(t, c, "2.0.0", map[string]bool{held: true})
	ro := f.rollout(t, c, "2.0.0", complete)
	if ro.Upgraded != 19 || ro.Held != 1 {
		t.Errorf("rollout %+v, want 19 upgraded and 1 held", ro)
	}
	waitAppType(t, c, held, f.pkg, 30*time.Second, func(at *operatorsv1alpha1.AppType) error {
		cond := apimeta.FindStatusCondition(at.Status.Conditions, operatorsv1alpha1.ConditionUpgradeAvailable)
		if cond == nil || cond.Reason != operatorsv1alpha1.ReasonAwaitingApproval {
			return fmt.Errorf("UpgradeAvailable %+v, want %s", cond, operatorsv1alpha1.ReasonAwaitingApproval)
		}
		return nil
	})
	f.untouched(t, c, []string{held}, "2.0.0", "1.0.0")

	approve(t, c, held, f.pkg, "2.0.0")
	waitAppType(t, c, held, f.pkg, time.Minute, installed("2.0.0"))
}
