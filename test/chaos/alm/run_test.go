package alm_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/test/harness"
	"github.com/almproject/alm/test/localenv"
)

const (
	// catalogName is the ConfigMap CatalogSource each run publishes its bundles into, in its own namespace.
	catalogName = "chaos"
	// convergeTimeout bounds the wait for the end state after a fault. A run that needs longer did not converge; a
	// scenario may bound it tighter (scenario's bound), and then waits on to tell a slow run from a stuck one.
	convergeTimeout = 3 * time.Minute
	// idleAfter: ALM made no write for this long, so the window ended before the chosen write.
	idleAfter = 3 * time.Second
)

// rig is what the runs of a scenario share: the cluster, ALM, the random source.
type rig struct {
	t   *testing.T
	c   client.Client
	alm *almPod
	rng *rand.Rand
	// previous is the namespace of the previous run, being deleted.
	previous string
}

func newRig(t *testing.T, scenario uint64) *rig {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("ALM_CHAOS_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("ALM_CHAOS_SEED=%q: %v", s, err)
		}
	}
	t.Logf("seed %d (replay: ALM_CHAOS_SEED=%d make test-chaos)", seed, seed)
	cfg := rest.CopyConfig(env.CP.Config)
	cfg.QPS, cfg.Burst = 500, 1000 // the checks read every object of a run every 100ms; client-go's 5/s would throttle them
	c, err := client.New(cfg, client.Options{Scheme: harness.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, c: c, rng: rand.New(rand.NewPCG(seed, scenario)), alm: &almPod{t: t}}
	// ALM serves: a previous scenario may have left it restarting, or waiting for its Lease.
	if err := env.WaitDeploymentAvailable(t.Context(), localenv.ALMNamespace, localenv.ALMDeployment, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := r.alm.waitLeading(time.Now()); err != nil {
		t.Fatal(err)
	}
	return r
}

// runsFrom reads a run count from the environment.
func runsFrom(t *testing.T, env string, def int) int {
	if s := os.Getenv(env); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number", env, s)
		}
		return n
	}
	return def
}

// run is one run: a namespace and a package of its own, named after it.
type run struct {
	*rig
	ns, pkg string
}

func (r *rig) newRun(ctx context.Context, name string) *run {
	r.t.Helper()
	x := &run{rig: r, ns: name, pkg: name}
	// A cluster admin's namespace: ALM installs there with its own permissions.
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{operatorsv1alpha1.LabelTrustedInstalls: "true"}}}
	if err := r.c.Create(ctx, namespace); err != nil {
		r.t.Fatal(err)
	}
	cs := &operatorsv1alpha1.CatalogSource{
		ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: catalogName},
		Spec:       operatorsv1alpha1.CatalogSourceSpec{ConfigMap: &operatorsv1alpha1.ConfigMapSource{}},
	}
	if err := r.c.Create(ctx, cs); err != nil {
		r.t.Fatal(err)
	}
	return x
}

func (x *run) ovName(version string) string { return x.pkg + ".v" + version }
func (x *run) image(version string) string  { return localenv.ImageHost + "/" + x.pkg + ":" + version }
func onlyIn(version string) string          { return "only-v" + version }

// publish pushes the operator's image of version and writes version of the run's package as a bundle (a
// harness.Demo operator that ships a ConfigMap no other version has, its container a test program serving probes on
// its declared port) and publishes it into the run's catalog.
func (x *run) publish(version, replaces string) {
	x.t.Helper()
	ref, err := name.ParseReference(env.Registry.Loopback+"/"+x.pkg+":"+version, name.Insecure)
	if err != nil {
		x.t.Fatal(err)
	}
	if err := remote.Write(ref, operatorImage, remote.WithContext(x.t.Context())); err != nil {
		x.t.Fatalf("pushing %s: %v", ref, err)
	}
	d := harness.Demo{Package: x.pkg, Name: x.ovName(version), Version: version, ExtraObjects: []map[string]any{{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": onlyIn(version)}, "data": map[string]any{"v": version},
	}}, Args: []string{"--listen=:8081"}, Ports: []corev1.ContainerPort{{Name: "probes", ContainerPort: 8081}}}
	if replaces != "" {
		d.Replaces = x.ovName(replaces)
	}
	dir := harness.WriteBundle(x.t, filepath.Join(stateDir, "bundles"), d)
	harness.Publish(x.t, x.c, dir, catalogName, x.ns)
}

// declare creates the AppType of the run's package.
func (x *run) declare(ctx context.Context) {
	x.t.Helper()
	at := &operatorsv1alpha1.AppType{ObjectMeta: metav1.ObjectMeta{Namespace: x.ns, Name: x.pkg}, Spec: operatorsv1alpha1.AppTypeSpec{Package: x.pkg}}
	if err := x.c.Create(ctx, at); err != nil {
		x.t.Fatal(err)
	}
}

// waitCatalog waits until ALM serves version as the newest of the package from the run's catalog.
func (x *run) waitCatalog(version string) {
	x.t.Helper()
	harness.Eventually(x.t, 60*time.Second, func() error {
		cs := &operatorsv1alpha1.CatalogSource{}
		if err := x.c.Get(context.Background(), client.ObjectKey{Namespace: x.ns, Name: catalogName}, cs); err != nil {
			return err
		}
		for _, p := range cs.Status.Packages {
			if p.Name == x.pkg && p.LatestVersion == version {
				return nil
			}
		}
		return fmt.Errorf("CatalogSource %s/%s serves %+v, want %s %s", x.ns, catalogName, cs.Status.Packages, x.pkg, version)
	})
}

// converge waits for the end state of version (see check) and returns how long it took; then, one second later,
// the state must still hold (nothing recreated or removed behind it). tick is called before each check.
func (x *run) converge(ctx context.Context, version string, kept map[ref]types.UID, tick func()) (time.Duration, error) {
	start, said := time.Now(), time.Now()
	var err error
	for {
		tick()
		if err = x.check(ctx, version, kept); err == nil {
			break
		}
		if time.Since(start) > convergeTimeout {
			return 0, fmt.Errorf("not converged after %s: %w", convergeTimeout, err)
		}
		if time.Since(said) > 10*time.Second {
			x.t.Logf("%s: not converged after %s: %v", x.ns, time.Since(start).Round(time.Second), err)
			said = time.Now()
		}
		time.Sleep(100 * time.Millisecond)
	}
	took := time.Since(start)
	time.Sleep(time.Second)
	if err := x.check(ctx, version, kept); err != nil {
		return 0, fmt.Errorf("converged after %s, but a second later: %w", took.Round(time.Millisecond), err)
	}
	return took, nil
}

// finish uninstalls: it deletes the AppType (its OperatorVersions go with it, through ALM's cleanup finalizer) and
// the namespace. The next run waits for the OperatorVersions to be gone (waitPrevious); the namespaces are waited
// for at the end (waitNamespacesGone).
func (x *run) finish(ctx context.Context) {
	x.t.Helper()
	at := &operatorsv1alpha1.AppType{ObjectMeta: metav1.ObjectMeta{Namespace: x.ns, Name: x.pkg}}
	if err := x.c.Delete(ctx, at, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
		x.t.Errorf("deleting AppType %s/%s: %v", x.ns, x.pkg, err)
	}
	if err := x.c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: x.ns}}); err != nil {
		x.t.Errorf("deleting namespace %s: %v", x.ns, err)
	}
	x.previous = x.ns
}

// waitPrevious waits until the previous run's namespace holds no OperatorVersion any more: ALM has run their
// cleanup finalizer (uninstall). It keeps one run's uninstall from adding writes to the next run's window.
func (r *rig) waitPrevious(ctx context.Context) {
	r.t.Helper()
	if r.previous == "" {
		return
	}
	harness.Eventually(r.t, 60*time.Second, func() error {
		list := &operatorsv1alpha1.OperatorVersionList{}
		if err := r.c.List(ctx, list, client.InNamespace(r.previous)); err != nil {
			return err
		}
		if len(list.Items) > 0 {
			return fmt.Errorf("namespace %s was deleted, but OperatorVersion %s is still there (finalizers %v)",
				r.previous, list.Items[0].Name, list.Items[0].Finalizers)
		}
		return nil
	})
}

// waitNamespacesGone waits until every namespace whose name starts with prefix is gone: nothing is stuck.
func (r *rig) waitNamespacesGone(ctx context.Context, prefix string) error {
	return localPoll(2*time.Minute, func() error {
		list := &corev1.NamespaceList{}
		if err := r.c.List(ctx, list); err != nil {
			return err
		}
		var left []string
		for _, ns := range list.Items {
			if strings.HasPrefix(ns.Name, prefix) {
				left = append(left, ns.Name)
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("namespaces still being deleted: %v", left)
		}
		return nil
	})
}

func localPoll(timeout time.Duration, cond func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s: %w", timeout, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// faultAt calls fault once ALM has made k writes since base, or when its writes stop for idleAfter (the window
// ended before the k-th write). It returns how many writes ALM had made and whether the k-th was reached.
func (r *rig) faultAt(base, k int, fault func()) (int, bool) {
	last, lastChange := base, time.Now()
	for {
		w, err := r.alm.writes()
		if err == nil && w-base >= k {
			fault()
			return w - base, true
		}
		if err == nil && w != last {
			last, lastChange = w, time.Now()
		}
		if time.Since(lastChange) > idleAfter {
			fault()
			return last - base, false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// tally collects a scenario's runs for its row in the report.
type tally struct {
	runs, converged  int
	slowest          time.Duration
	times, leaders   []time.Duration
	service, cluster []time.Duration
	phases           map[string]int
	kills            []int
	late             int
	// repaired are the ends of the faults, in order.
	repaired []time.Time
	// over are the times of the runs that reached the end state, but later than the scenario's bound.
	over []time.Duration
}

func (s *tally) add(res result) {
	if s.phases == nil {
		s.phases = map[string]int{}
	}
	s.runs++
	s.phases[res.phase]++
	s.kills = append(s.kills, res.writes)
	if !res.repaired.IsZero() {
		s.repaired = append(s.repaired, res.repaired)
	}
	if res.service > 0 {
		s.service = append(s.service, res.service)
	}
	if res.cluster > 0 {
		s.cluster = append(s.cluster, res.cluster)
	}
	if !res.reached {
		s.late++
	}
	if res.err != nil {
		return
	}
	s.converged++
	s.times = append(s.times, res.took)
	s.slowest = max(s.slowest, res.took)
	if !res.restartedAt.IsZero() {
		s.leaders = append(s.leaders, res.leader)
	}
}

// median sorts ds and returns its middle one (0 when empty).
func median(ds []time.Duration) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	if len(ds) == 0 {
		return 0
	}
	return ds[len(ds)/2]
}

// notes are the figures beside the row: where the faults landed, how convergence times spread, how long a
// restarted ALM waited for its Lease, and how often the kubelet restarted ALM.
func (s *tally) notes(calibration string, restarts int) string {
	phases := make([]string, 0, len(s.phases))
	for p := range s.phases {
		phases = append(phases, p)
	}
	sort.Slice(phases, func(i, j int) bool { return s.phases[phases[i]] > s.phases[phases[j]] })
	for i, p := range phases {
		phases[i] = fmt.Sprintf("%s %d", p, s.phases[p])
	}
	sort.Ints(s.kills)
	out := fmt.Sprintf("faults at ALM writes %d–%d, median %d (%s); phase at the fault: %s",
		s.kills[0], s.kills[len(s.kills)-1], s.kills[len(s.kills)/2], calibration, strings.Join(phases, ", "))
	if s.late > 0 {
		out += fmt.Sprintf(" (%d after ALM went idle)", s.late)
	}
	out += fmt.Sprintf("; median convergence %s", median(s.times).Round(10*time.Millisecond))
	if len(s.repaired) > 1 {
		var gaps []time.Duration
		for i := 1; i < len(s.repaired); i++ {
			gaps = append(gaps, s.repaired[i].Sub(s.repaired[i-1]))
		}
		out += fmt.Sprintf("; one fault every %s (median)", median(gaps).Round(time.Second))
	}
	if len(s.leaders) > 0 {
		out += fmt.Sprintf("; the restarted ALM held its Lease after median %s, at most %s (it holds the Lease as its pod, so a restart in the pod takes it over at once)",
			median(s.leaders).Round(10*time.Millisecond), s.leaders[len(s.leaders)-1].Round(10*time.Millisecond))
	}
	if len(s.service) > 0 {
		mid := median(s.service) // sorts
		out += fmt.Sprintf("; kube-apiserver answered through the kubernetes Service median %s, at most %s after it answered on its address",
			mid.Round(10*time.Millisecond), s.service[len(s.service)-1].Round(10*time.Millisecond))
	}
	if len(s.cluster) > 0 {
		mid := median(s.cluster) // sorts
		out += fmt.Sprintf("; in %d runs the new version's pods became available only after the fault ended (the kubelet's and the "+
			"deployment controller's own backoff), median %s, at most %s later: left out of the convergence times, which are ALM's share",
			len(s.cluster), mid.Round(10*time.Millisecond), s.cluster[len(s.cluster)-1].Round(10*time.Millisecond))
	}
	return out + fmt.Sprintf("; the kubelet restarted ALM %d times", restarts)
}
