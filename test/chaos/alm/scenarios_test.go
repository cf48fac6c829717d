package alm_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/almproject/alm/test/chaos"
)

// result is what one run saw.
type result struct {
	// writes is how many writes ALM had made in the window when the fault hit (in a run without a fault: until
	// the end state); reached says the fault hit at the chosen write, not after ALM went idle.
	writes  int
	reached bool
	// phase and detail say where the install or upgrade was when the fault hit.
	phase, detail string
	// took is the time from the end of the fault (ALM started again, or kube-apiserver serving again) to the end
	// state.
	took time.Duration
	// restartedAt is when the kubelet had started the killed ALM again; leader is how long after that the new
	// process held its leader election Lease (SIGKILL releases nothing: the killed process's Lease runs out first).
	restartedAt time.Time
	leader      time.Duration
	// repaired is when the fault ended (the time converging is measured from).
	repaired time.Time
	// service is how long after kube-apiserver answered on its own address it answered through the kubernetes
	// Service, as ALM and the operators reach it (kube-apiserver restarted only).
	service time.Duration
	// cluster is, of took, the share before the new version's Deployment completed its rollout after the fault: the
	// kubelet starting its pod and the deployment controller seeing it ready, which ALM waits for (kube-apiserver
	// restarted only; took is then ALM's share).
	cluster time.Duration
	err     error
}

// clusterShare splits a converged kube-apiserver run's time: the cluster's share is from the end of the fault to the
// new version's Deployment completing its rollout (if that came later), ALM's is the rest.
func (x *run) clusterShare(ctx context.Context, res *result) {
	if res.err != nil || res.service == 0 {
		return
	}
	d := &appsv1.Deployment{}
	if err := x.c.Get(ctx, client.ObjectKey{Namespace: x.ns, Name: x.pkg + "-operator"}, d); err != nil {
		return
	}
	for _, c := range d.Status.Conditions {
		// The rollout of the new version's pod template is complete (Available may have stayed True throughout, on
		// the old pods): Progressing, NewReplicaSetAvailable, updated when the new ReplicaSet became available.
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionTrue && c.Reason == "NewReplicaSetAvailable" {
			// Condition times have seconds only: the second's start, so the cluster's share is never overstated.
			available := c.LastUpdateTime.Time
			if share := available.Sub(res.repaired); share > 0 {
				res.cluster = min(share, res.took)
				res.took -= res.cluster
			}
		}
	}
}

// fault breaks something at the chosen write and repairs it; x.phaseNow reports where the run was.
type fault func(ctx context.Context, x *run, from, to string, res *result)

// killALM sends SIGKILL to ALM's process, notes where the run was, and waits until the kubelet has started ALM
// again, as a kubelet restarts a container of a restartPolicy Always pod (after its restart backoff, capped at 1s).
func killALM(ctx context.Context, x *run, from, to string, res *result) {
	pid, err := x.alm.kill()
	if err != nil {
		res.err = err
		return
	}
	res.phase, res.detail = x.phaseNow(ctx, from, to)
	res.err = x.alm.restarted(pid)
	res.restartedAt = time.Now()
}

// restartAPIServer notes where the run is and restarts kube-apiserver; the fault ends when the API server answers
// through the kubernetes Service again, where ALM (in its pod) and the operators reach it.
func restartAPIServer(ctx context.Context, x *run, from, to string, res *result) {
	res.phase, res.detail = x.phaseNow(ctx, from, to)
	if err := env.CP.RestartAPIServer(); err != nil {
		res.err = err
		return
	}
	res.service, res.err = env.CP.WaitServiceAnswers(ctx, 2*time.Minute)
}

// restartNode notes where the run is and restarts containerd, then the kubelet, as a node's service manager would
// after an upgrade of either; the containers keep running (their shims outlive containerd), ALM among them.
func restartNode(ctx context.Context, x *run, from, to string, res *result) {
	res.phase, res.detail = x.phaseNow(ctx, from, to)
	for _, name := range []string{"containerd", "kubelet"} {
		if err := env.Node.Restart(ctx, name); err != nil {
			res.err = fmt.Errorf("restarting %s: %w", name, err)
			return
		}
	}
}

// baseWrites is ALM's write count before a window.
func (r *rig) baseWrites() int {
	r.t.Helper()
	n, err := r.alm.writes()
	if err != nil {
		r.t.Fatalf("ALM's writes (the audit log): %v", err)
	}
	return n
}

// window runs act (the user's step that starts the install or upgrade) and then, unless k < 0, the fault at ALM's
// k-th write after it; then it waits for version's end state.
func (x *run) window(ctx context.Context, k int, act func(), f fault, from, to string, kept map[ref]types.UID) result {
	x.waitPrevious(ctx)
	base := x.baseWrites()
	start := time.Now()
	act()
	var res result
	if k < 0 {
		res.took, res.err = x.converge(ctx, to, kept, func() {})
		res.took = time.Since(start) - time.Second // converge checks once more a second later
		res.writes, _ = x.alm.writes()
		res.writes -= base
		return res
	}
	res.writes, res.reached = x.faultAt(base, k, func() { f(ctx, x, from, to, &res) })
	res.repaired = time.Now()
	if res.err != nil {
		return res
	}
	led := res.restartedAt.IsZero()
	res.took, res.err = x.converge(ctx, to, kept, func() {
		if ok, _ := x.alm.leading(); !led && ok {
			led, res.leader = true, time.Since(res.restartedAt)
		}
	})
	if !led && res.err == nil {
		res.leader, res.err = x.alm.waitLeading(res.restartedAt)
	}
	x.clusterShare(ctx, &res)
	return res
}

// install: 1.0.0 is published, the AppType declared; the fault hits during the install.
func (r *rig) install(ctx context.Context, name string, k int, f fault) result {
	x := r.newRun(ctx, name)
	defer x.finish(ctx)
	x.publish("1.0.0", "")
	x.waitCatalog("1.0.0")
	return x.window(ctx, k, func() { x.declare(ctx) }, f, "", "1.0.0", nil)
}

// upgrade: 1.0.0 is installed without fault and the UIDs of what 2.0.0 will adopt are recorded; then 2.0.0
// (replaces 1.0.0) is published and the fault hits during the upgrade: 2.0.0's install, the adoption of 1.0.0's
// objects, 1.0.0's Replacing and deletion, the cleanup of what only 1.0.0 had.
func (r *rig) upgrade(ctx context.Context, name string, k int, f fault) result {
	x := r.newRun(ctx, name)
	defer x.finish(ctx)
	x.publish("1.0.0", "")
	x.declare(ctx)
	if _, err := x.converge(ctx, "1.0.0", nil, func() {}); err != nil {
		return result{err: fmt.Errorf("installing 1.0.0 before the upgrade: %w", err)}
	}
	kept, err := x.uids(ctx, x.shared())
	if err != nil {
		return result{err: err}
	}
	return x.window(ctx, k, func() { x.publish("2.0.0", "1.0.0") }, f, "1.0.0", "2.0.0", kept)
}

// scenario runs one run without a fault (to count ALM's writes in the window), then runs with the fault at a write
// drawn uniformly from 1 to that count, and records the row. A run converges when it reaches the end state, and,
// with bound > 0, does so within bound of the end of the fault.
func scenario(t *testing.T, r *rig, row chaos.Row, prefix string, runs int, bound time.Duration, one func(name string, k int) result) {
	ctx := t.Context()
	start := time.Now()
	clean := one(prefix+"-clean", -1)
	if clean.err != nil {
		t.Fatalf("a run without a fault did not converge: %v", clean.err)
	}
	calibration := fmt.Sprintf("a run without a fault: %d ALM writes, %s", clean.writes, clean.took.Round(10*time.Millisecond))
	t.Logf("%s", calibration)
	restarts := r.alm.restarts()
	var s tally
	for i := 1; i <= runs; i++ {
		name := fmt.Sprintf("%s-%02d", prefix, i)
		k := 1 + r.rng.IntN(max(clean.writes, 1))
		runStart := time.Now()
		res := one(name, k)
		if res.err == nil && bound > 0 && res.took > bound {
			res.err = fmt.Errorf("converged %s after the end of the fault, over the bound of %s", res.took.Round(time.Millisecond), bound)
			s.over = append(s.over, res.took)
		}
		t.Logf("%s: fault at ALM write %d (chosen %d, reached %v) in phase %q %s; converged in %s (run: %s)",
			name, res.writes, k, res.reached, res.phase, res.detail, res.took.Round(time.Millisecond), time.Since(runStart).Round(time.Millisecond))
		if res.err != nil {
			t.Errorf("%s did not converge: %v\n(ALM's log: %s)", name, res.err, r.alm.logPath())
		}
		s.add(res)
	}
	notes := s.notes(calibration, r.alm.restarts()-restarts)
	if bound > 0 {
		notes += fmt.Sprintf("; bound %s from the end of the fault, %d runs over it", bound, len(s.over))
		if len(s.over) > 0 {
			notes += fmt.Sprintf(" (%v)", s.over)
		}
	}
	t.Logf("runs done after %s", time.Since(start).Round(time.Millisecond))
	if err := r.waitNamespacesGone(ctx, prefix+"-"); err != nil {
		t.Errorf("uninstall: %v", err)
		notes += "; UNINSTALL STUCK: " + err.Error()
	}
	row.Runs, row.Converged, row.Slowest = s.runs, s.converged, s.slowest
	if row.Notes != "" {
		notes += "; " + row.Notes
	}
	row.Notes = notes + fmt.Sprintf("; %s in all", time.Since(start).Round(time.Second))
	chaos.Record(t, row)
}

const (
	checksInstall = "AppType installed 1.0.0; exactly 1 OperatorVersion, 1.0.0, Succeeded; its 10 objects present, " +
		"labelled for it and its only controller; 0 duplicates, leftovers, orphan refs, stuck finalizers; same 1s later; namespace deletion completes"
	checksUpgrade = "AppType installed 2.0.0; exactly 1 OperatorVersion, 2.0.0, Succeeded (1.0.0 collected); its 10 objects present, " +
		"labelled for it and its only controller; the 5 adopted objects keep their UIDs; 1.0.0's ConfigMap and RBAC gone; " +
		"0 duplicates, leftovers, orphan refs, stuck finalizers; same 1s later; namespace deletion completes"
)

func TestALMKilledDuringInstall(t *testing.T) {
	chaos.Require(t)
	r := newRig(t, 1)
	scenario(t, r, chaos.Row{Scenario: "ALM SIGKILL during install, restarted", Checks: checksInstall}, "install",
		runsFrom(t, "ALM_CHAOS_RUNS", 20), 0, func(name string, k int) result { return r.install(t.Context(), name, k, killALM) })
}

func TestALMKilledDuringUpgrade(t *testing.T) {
	chaos.Require(t)
	r := newRig(t, 2)
	scenario(t, r, chaos.Row{Scenario: "ALM SIGKILL during upgrade with adoption, restarted", Checks: checksUpgrade}, "upgrade",
		runsFrom(t, "ALM_CHAOS_RUNS", 20), 0, func(name string, k int) result { return r.upgrade(t.Context(), name, k, killALM) })
}

// apiServerBound is how soon after kube-apiserver answers again a run must reach its end state: ALM's caches
// resume within seconds (package outage), a failed reconcile is retried within 10s and a waiting version is
// rechecked every 10s (installer.Recheck), so 30s leaves room for one of each on a loaded machine.
const apiServerBound = 30 * time.Second

func TestAPIServerRestartedDuringUpgrade(t *testing.T) {
	chaos.Require(t)
	r := newRig(t, 3)
	row := chaos.Row{Scenario: "kube-apiserver restarted during upgrade", Checks: checksUpgrade + "; within " +
		apiServerBound.String() + " of kube-apiserver answering again through the kubernetes Service (as pods reach it) and the new version's pods being available",
		Notes: "ALM's informers retry a refused or throttled list or watch themselves every ≤2s and resume a watch the new " +
			"kube-apiserver answers with 410 from a fresh list at once (package outage), instead of client-go's reflector " +
			"backoff (0.8s doubling to 30s plus jitter, reset only after 2 min: up to a minute behind); a reconcile that failed " +
			"while kube-apiserver was away is retried within 10s (not after 5ms doubling to 1000s), and a version that waits " +
			"(Installing, its last status write not cached yet, Replacing) is rechecked every 10s"}
	scenario(t, r, row, "apiserver", runsFrom(t, "ALM_CHAOS_APISERVER_RUNS", 10), apiServerBound,
		func(name string, k int) result { return r.upgrade(t.Context(), name, k, restartAPIServer) })
}

func TestNodeRestartedDuringUpgrade(t *testing.T) {
	chaos.Require(t)
	r := newRig(t, 4)
	row := chaos.Row{Scenario: "containerd and kubelet restarted during upgrade (containers keep running)", Checks: checksUpgrade +
		"; ALM's container not restarted by it",
		Notes: "containerd gets SIGTERM and starts again (its shims, and so the containers, keep running), then the kubelet; " +
			"the kubelet finds its pods' containers again and reports their status afresh"}
	before := r.alm.restarts()
	scenario(t, r, row, "node", runsFrom(t, "ALM_CHAOS_NODE_RUNS", 5), 0,
		func(name string, k int) result { return r.upgrade(t.Context(), name, k, restartNode) })
	if after := r.alm.restarts(); after != before {
		t.Errorf("ALM's container was restarted %d times while the node restarted: a restarted kubelet or containerd must leave running containers alone", after-before)
	}
}
