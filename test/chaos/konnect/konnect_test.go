package konnect

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	konnectoperator "github.com/almproject/alm/controllers/konnect"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/test/chaos"
	"github.com/almproject/alm/test/konnectsim"
)

// The scenario's size: controlPlanes control planes, each with perCP services, perCP routes (one per service) and
// perCP consumers: 5 + 3*5*33 = 500 entities.
const (
	controlPlanes = 5
	perCP         = 33
	entities      = controlPlanes * (1 + 3*perCP)
)

// TestKonnectChaos: the Konnect operator, as a process, syncs 500 entities (control planes, consumers, and services
// and routes without a name, which Konnect does not deduplicate: a create sent twice is two entities) to the
// simulator answering 10% of the requests with a 5xx, losing 5% of the answers to changes it committed, throttling
// every request with 429 + Retry-After in bursts and taking 50ms per request. The operator is killed with SIGKILL
// twice while it creates, each time at the moment one of its creates (a service, then a route) has been committed
// in Konnect and the simulator holds the answer (released or dropped after the kill, by seed), and once while it
// deletes; it is started again each time. In the end every object is Programmed, Konnect holds exactly one entity
// per object (by k8s-uid, and by name where there is one), and once everything is deleted Konnect holds nothing and
// no object is left on a finalizer. TestKonnectChaosCatchesDuplicates shows the duplicate check failing when the
// operator does not look for an earlier create by its tag.
//
// It runs three times, with seeds 13, 14 and 15 for the simulator's faults and the moments of the kills
// (KONNECT_CHAOS_SEEDS=7,8 picks others).
func TestKonnectChaos(t *testing.T) {
	chaos.Require(t)
	seeds := []uint64{13, 14, 15}
	if v := os.Getenv("KONNECT_CHAOS_SEEDS"); v != "" {
		seeds = nil
		for f := range strings.SplitSeq(v, ",") {
			var sd uint64
			if _, err := fmt.Sscan(f, &sd); err != nil {
				t.Fatalf("KONNECT_CHAOS_SEEDS=%q: %v", v, err)
			}
			seeds = append(seeds, sd)
		}
	}
	bin := buildOperator(t)
	row := chaos.Row{
		Scenario: fmt.Sprintf("Konnect operator: %d entities (services and routes unnamed), 10%% 5xx, 5%% lost answers, 429 bursts, 50ms latency; "+
			"SIGKILL with a service create and with a route create committed and unanswered, and once while deleting", entities),
		Checks: "all Programmed, 0 duplicates in Konnect (by k8s-uid; by name where named), ids match; after delete: 0 entities in Konnect, " +
			"0 objects on a finalizer",
	}
	var notes []string
	var calls int64
	var inj konnectsim.Injected
	for _, sd := range seeds {
		var r result
		row.Runs++
		if t.Run(fmt.Sprintf("seed-%d", sd), func(t *testing.T) { run(t, bin, sd, &r) }) {
			row.Converged++
			row.Slowest = max(row.Slowest, r.total)
		}
		calls += r.calls
		inj.ServerErrors += r.injected.ServerErrors
		inj.LostResponses += r.injected.LostResponses
		inj.Throttled += r.injected.Throttled
		inj.Held += r.injected.Held
		notes = append(notes, fmt.Sprintf("seed %d: Programmed in %s, deleted in %s, kills at %s", sd,
			r.created.Round(100*time.Millisecond), r.deleted.Round(100*time.Millisecond), strings.Join(r.kills, " and ")))
	}
	row.Notes = fmt.Sprintf("Konnect calls %d; injected 5xx %d, lost answers %d, 429 %d, held answers %d; %s",
		calls, inj.ServerErrors, inj.LostResponses, inj.Throttled, inj.Held, strings.Join(notes, "; "))
	chaos.Record(t, row)
}

// result is what one run measured.
type result struct {
	total, created, deleted time.Duration
	calls                   int64
	injected                konnectsim.Injected
	kills                   []string
}

// run is one run of the scenario with seed; r is filled as far as the run got (also when it fails).
func run(t *testing.T, bin string, seed uint64, r *result) {
	s := newScenario(t, bin, fmt.Sprintf("konnect-chaos-%d", seed), seed)
	defer func() {
		r.calls, r.injected, r.kills = s.sim.TotalRequests(), s.sim.Injected(), s.killNotes
	}()
	start := time.Now()
	holds := s.holdCreates()
	s.createAll()
	r.created = s.phase("create", start, s.programmed, holds)
	for _, p := range s.duplicates() {
		t.Error(p)
	}

	deleteStart := time.Now()
	s.deleteAll()
	r.deleted = s.phase("delete", deleteStart, s.gone, nil)
	s.checkNothingLeftInKonnect()
	r.total = time.Since(start)
}

// scenario is one run's world: the simulator, a namespace, the operator process and the plan of kills.
type scenario struct {
	t   *testing.T
	ctx context.Context
	c   client.Client
	sim *konnectsim.Server
	op  *operator
	ns  string
	rnd *rand.Rand

	stopThrottle chan struct{}
	killNotes    []string
}

// newScenario starts the simulator and the operator (bin), watching the new namespace ns. The Konnect API: 50ms per
// request, a server-side limit of 200 requests/s (burst 50) answered with 429 and Retry-After, 10% 5xx (nothing
// committed), 5% of the changes committed but answered 502, and bursts of 429 for everything every 4s.
func newScenario(t *testing.T, bin, ns string, seed uint64) *scenario {
	t.Helper()
	s := newScenarioWith(t, bin, ns, seed, konnectsim.Options{Seed: seed, Latency: 50 * time.Millisecond, RateLimit: 200, RateLimitBurst: 50,
		ErrorRate: 0.10, LostResponseRate: 0.05})
	go s.throttleBursts()
	return s
}

// newScenarioWith starts the simulator with opts and the operator (bin), watching the new namespace ns; with ns ""
// the operator watches every namespace and each run gets one of its own (inNamespace).
func newScenarioWith(t *testing.T, bin, ns string, seed uint64, opts konnectsim.Options) *scenario {
	t.Helper()
	if kubeAPI == nil {
		t.Fatal("no local control plane")
	}
	sim := konnectsim.StartTest(t, opts) // fails the test on a request or answer Kong's OpenAPI document rejects

	scheme, err := konnectoperator.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(kubeAPI.Config)
	cfg.QPS, cfg.Burst = 500, 1000
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	args := []string{"--kubeconfig", kubeAPI.KubeconfigPath,
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0",
		// A short period, so that drift scans run during the scenario too.
		"--sync-period", "15s",
		"--konnect-rate-limit", "100",
	}
	logName := "konnect-all-namespaces"
	if ns != "" {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
		args, logName = append(args, "--watch-namespaces", ns), ns
	}
	logPath := filepath.Join(os.TempDir(), logName+"-operator.log")
	op := newOperator(t, bin, logPath, args...)
	t.Logf("operator log: %s", logPath)
	op.start()

	s := &scenario{t: t, ctx: ctx, c: c, sim: sim, op: op, ns: ns, rnd: rand.New(rand.NewPCG(seed, seed+1)), stopThrottle: make(chan struct{})}
	t.Cleanup(func() { close(s.stopThrottle) })
	return s
}

// inNamespace is s for one run of a scenario whose operator watches every namespace: the same simulator and
// operator, the new namespace ns, t's checks and a random source of seed.
func (s *scenario) inNamespace(t *testing.T, ns string, seed uint64) *scenario {
	t.Helper()
	if err := s.c.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	return &scenario{t: t, ctx: t.Context(), c: s.c, sim: s.sim, op: s.op, ns: ns, rnd: rand.New(rand.NewPCG(seed, seed+1)),
		stopThrottle: s.stopThrottle}
}

// throttleBursts answers every request with 429 and Retry-After: 1s for half a second, every 4 seconds, until the
// end.
func (s *scenario) throttleBursts() {
	tick := time.NewTicker(4 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-s.stopThrottle:
			return
		case <-tick.C:
			s.sim.ThrottleFor("", 500*time.Millisecond, time.Second)
		}
	}
}

// progress is how far a phase is: done of total, and a few examples of what is not done yet.
type progress struct {
	done, total int
	sample      []string
}

func (p progress) String() string {
	return fmt.Sprintf("%d of %d done; e.g. %s", p.done, p.total, strings.Join(p.sample, "; "))
}

// heldCreate is a create the simulator will hold: the skip+1-th create of its kind that reaches it.
type heldCreate struct {
	kind string
	hold *konnectsim.Hold
	skip int
	done bool
}

// holdCreates arms the simulator to hold the answer of one service create and one route create, each a seeded
// random one of the first half of the creates of its kind (so that it comes: every service and route is created
// at least once).
func (s *scenario) holdCreates() []*heldCreate {
	var out []*heldCreate
	for _, k := range []struct{ kind, path string }{{"service", konnectsim.PathServices}, {"route", konnectsim.PathRoutes}} {
		skip := s.rnd.IntN(controlPlanes * perCP / 2)
		out = append(out, &heldCreate{kind: k.kind, skip: skip, hold: s.sim.HoldAfter("POST", k.path, skip)})
	}
	return out
}

// phase waits (at most 4 minutes) until check reports everything done. With holds, it kills the operator with
// SIGKILL as soon as a held create is committed (its answer not sent), then releases or drops the answer (by seed)
// and starts the operator again; without, it kills it once when a seeded random share (20% to 70%) of the work is
// done. It returns how long the phase took since start (when its objects began to be declared or deleted).
func (s *scenario) phase(name string, start time.Time, check func() (progress, error), holds []*heldCreate) time.Duration {
	s.t.Helper()
	killAt := 0.2 + 0.5*s.rnd.Float64()
	killed := len(holds) > 0 // kills wait for the holds instead
	deadline := start.Add(4 * time.Minute)
	for {
		if err := s.op.running(); err != nil {
			s.t.Fatal(err)
		}
		p, err := check()
		if s.killAtHeld(name, start, p, holds) {
			continue
		}
		switch {
		case err != nil:
		case !killed && p.done >= int(killAt*float64(p.total)):
			s.op.kill()
			s.op.start()
			killed = true
			s.killNotes = append(s.killNotes, fmt.Sprintf("%s+%s (%d/%d done)", name, time.Since(start).Round(100*time.Millisecond), p.done, p.total))
			continue
		case p.done == p.total && killed && allDone(holds):
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: not done after 4m: %v %v; held creates done: %v (operator log: %s)", name, p, err, allDone(holds), s.op.log.Name())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// killAtHeld kills the operator for the first held create that was committed and not yet acted on, then releases
// or drops its answer and starts the operator again. It reports whether it did.
func (s *scenario) killAtHeld(name string, start time.Time, p progress, holds []*heldCreate) bool {
	for _, h := range holds {
		if h.done {
			continue
		}
		select {
		case <-h.hold.Committed():
		default:
			continue
		}
		s.op.kill()
		answer := "released"
		if s.rnd.IntN(2) == 0 {
			h.hold.Drop()
			answer = "dropped"
		} else {
			h.hold.Release()
		}
		s.op.start()
		h.done = true
		s.killNotes = append(s.killNotes, fmt.Sprintf("%s+%s (%d/%d done) with create %d of a %s committed (%d) and unanswered, then %s",
			name, time.Since(start).Round(100*time.Millisecond), p.done, p.total, h.skip+1, h.kind, h.hold.Status(), answer))
		return true
	}
	return false
}

func allDone(holds []*heldCreate) bool {
	for _, h := range holds {
		if !h.done {
			return false
		}
	}
	return true
}

// ---- the objects ----

// create declares obj, retrying for up to a minute what kube-apiserver refuses while it restarts (a create whose
// answer was lost then finds it there).
func (s *scenario) create(obj client.Object) {
	s.t.Helper()
	obj.SetNamespace(s.ns)
	s.retry(fmt.Sprintf("creating %T %s", obj, obj.GetName()), func() error {
		if err := s.c.Create(s.ctx, obj); !apierrors.IsAlreadyExists(err) {
			return err
		}
		return nil
	})
}

// retry calls f until it succeeds, for up to a minute.
func (s *scenario) retry(what string, f func() error) {
	s.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// createAll declares the token Secret, the auth configuration reading it, and the 500 entities, all at once (the
// children wait for their parents to be Programmed).
func (s *scenario) createAll() {
	s.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "konnect-token"}, StringData: map[string]string{konnectv1alpha1.SecretTokenKey: konnectsim.DefaultToken}})
	s.create(&konnectv1alpha1.KonnectAPIAuthConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "auth"},
		Spec: konnectv1alpha1.KonnectAPIAuthConfigurationSpec{
			Type: konnectv1alpha1.KonnectAPIAuthTypeSecretRef, SecretRef: &corev1.SecretReference{Name: "konnect-token"}, ServerURL: s.sim.URL(),
		},
	})
	for c := range controlPlanes {
		cp := fmt.Sprintf("cp-%d", c)
		s.create(&konnectv1alpha2.KonnectGatewayControlPlane{
			ObjectMeta: metav1.ObjectMeta{Name: cp},
			Spec: konnectv1alpha2.KonnectGatewayControlPlaneSpec{
				CreateControlPlaneRequest: &konnectv1alpha2.CreateControlPlaneRequest{Name: cp, Labels: map[string]string{"chaos": "konnect"}},
				KonnectConfiguration:      konnectv1alpha1.KonnectConfiguration{APIAuthConfigurationRef: konnectv1alpha1.KonnectAPIAuthConfigurationRef{Name: "auth"}},
			},
		})
	}
	for i := range controlPlanes * perCP {
		cp := fmt.Sprintf("cp-%d", i%controlPlanes)
		// Services and routes without a name: nothing but the k8s-uid tag tells a second create from the first.
		svc := fmt.Sprintf("svc-%d", i)
		s.create(&configurationv1alpha1.KongService{
			ObjectMeta: metav1.ObjectMeta{Name: svc},
			Spec: configurationv1alpha1.KongServiceSpec{
				ControlPlaneRef:    cpRef(cp),
				KongServiceAPISpec: configurationv1alpha1.KongServiceAPISpec{Host: svc + ".example.com", Port: 80, Protocol: "http"},
			},
		})
		route := fmt.Sprintf("route-%d", i)
		s.create(&configurationv1alpha1.KongRoute{
			ObjectMeta: metav1.ObjectMeta{Name: route},
			Spec: configurationv1alpha1.KongRouteSpec{
				ServiceRef:       &configurationv1alpha1.ServiceRef{Type: configurationv1alpha1.ServiceRefNamespacedRef, NamespacedRef: &configurationv1alpha1.NameRef{Name: svc}},
				KongRouteAPISpec: configurationv1alpha1.KongRouteAPISpec{Paths: []string{"/" + route}},
			},
		})
		s.create(&configurationv1.KongConsumer{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("consumer-%d", i)},
			Username:   fmt.Sprintf("user-%d", i),
			CustomID:   fmt.Sprintf("id-%d", i),
			Spec:       configurationv1.KongConsumerSpec{ControlPlaneRef: cpRef(cp)},
		})
	}
}

func cpRef(name string) *configurationv1alpha1.ControlPlaneRef {
	return &configurationv1alpha1.ControlPlaneRef{
		Type:                 configurationv1alpha1.ControlPlaneRefKonnectNamespacedRef,
		KonnectNamespacedRef: &configurationv1alpha1.KonnectNamespacedRef{Name: name},
	}
}

// declared is every object of the scenario's namespace with its conditions and Konnect ID, by kind.
type declared struct {
	kind  string
	name  string
	id    string
	cpID  string
	conds []metav1.Condition
	final []string
}

func (s *scenario) list() ([]declared, error) {
	cps := &konnectv1alpha2.KonnectGatewayControlPlaneList{}
	svcs := &configurationv1alpha1.KongServiceList{}
	routes := &configurationv1alpha1.KongRouteList{}
	consumers := &configurationv1.KongConsumerList{}
	auths := &konnectv1alpha1.KonnectAPIAuthConfigurationList{}
	secrets := &corev1.SecretList{}
	for _, l := range []client.ObjectList{cps, svcs, routes, consumers, auths, secrets} {
		if err := s.c.List(s.ctx, l, client.InNamespace(s.ns)); err != nil {
			return nil, err
		}
	}
	var out []declared
	for _, o := range cps.Items {
		out = append(out, declared{"KonnectGatewayControlPlane", o.Name, o.Status.ID, "", o.Status.Conditions, o.Finalizers})
	}
	for _, o := range svcs.Items {
		id, cp := konnectIDs(o.Status.Konnect)
		out = append(out, declared{"KongService", o.Name, id, cp, o.Status.Conditions, o.Finalizers})
	}
	for _, o := range routes.Items {
		var k *configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef
		if o.Status.Konnect != nil {
			k = &o.Status.Konnect.KonnectEntityStatusWithControlPlaneRef
		}
		id, cp := konnectIDs(k)
		out = append(out, declared{"KongRoute", o.Name, id, cp, o.Status.Conditions, o.Finalizers})
	}
	for _, o := range consumers.Items {
		id, cp := konnectIDs(o.Status.Konnect)
		out = append(out, declared{"KongConsumer", o.Name, id, cp, o.Status.Conditions, o.Finalizers})
	}
	for _, o := range auths.Items {
		out = append(out, declared{"KonnectAPIAuthConfiguration", o.Name, "", "", nil, o.Finalizers})
	}
	for _, o := range secrets.Items {
		out = append(out, declared{"Secret", o.Name, "", "", nil, o.Finalizers})
	}
	return out, nil
}

func konnectIDs(k *configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef) (id, cpID string) {
	if k == nil {
		return "", ""
	}
	return k.ID, k.ControlPlaneID
}

// programmed counts the Programmed entities of the 500.
func (s *scenario) programmed() (progress, error) {
	objs, err := s.list()
	if err != nil {
		return progress{}, err
	}
	p := progress{total: entities}
	n := 0
	for _, o := range objs {
		if o.kind == "KonnectAPIAuthConfiguration" || o.kind == "Secret" {
			continue
		}
		n++
		if c := apimeta.FindStatusCondition(o.conds, konnectv1alpha1.ConditionProgrammed); c != nil && c.Status == metav1.ConditionTrue {
			p.done++
		} else if len(p.sample) < 3 {
			p.sample = append(p.sample, fmt.Sprintf("%s %s: %v", o.kind, o.name, c))
		}
	}
	if n != entities {
		return p, fmt.Errorf("%d objects declared, want %d", n, entities)
	}
	return p, nil
}

// deleteAll deletes everything at once, the way deleting a namespace would: entities, control planes, the auth
// configuration and its Secret.
func (s *scenario) deleteAll() {
	s.t.Helper()
	for _, obj := range []client.Object{
		&configurationv1alpha1.KongRoute{}, &configurationv1alpha1.KongService{}, &configurationv1.KongConsumer{},
		&konnectv1alpha2.KonnectGatewayControlPlane{}, &konnectv1alpha1.KonnectAPIAuthConfiguration{}, &corev1.Secret{},
	} {
		s.retry(fmt.Sprintf("deleting every %T", obj), func() error { return s.c.DeleteAllOf(s.ctx, obj, client.InNamespace(s.ns)) })
	}
}

// gone counts the objects deleted (the 500 entities, the auth configuration and its Secret), with the finalizers
// that hold a few of those left.
func (s *scenario) gone() (progress, error) {
	objs, err := s.list()
	if err != nil {
		return progress{}, err
	}
	p := progress{total: entities + 2, done: entities + 2 - len(objs)}
	for _, o := range objs[:min(3, len(objs))] {
		p.sample = append(p.sample, fmt.Sprintf("%s %s (finalizers %v)", o.kind, o.name, o.final))
	}
	return p, nil
}

// ---- the checks of Konnect ----

// duplicates lists what is wrong with Konnect's entities: more than one entity with a k8s-uid (or a name, for the
// kinds that have one here), a count other than one per object, or an object whose status.id is not in Konnect.
func (s *scenario) duplicates() []string {
	s.t.Helper()
	objs, err := s.list()
	if err != nil {
		s.t.Fatal(err)
	}
	var problems []string
	byName := map[string]int{}
	byUID := map[string][]string{}
	ids := map[string]bool{}
	all := s.sim.Objects()
	for _, o := range all {
		if o.Name != "" {
			byName[fmt.Sprintf("%s %s/%s", o.Kind, o.ControlPlaneID, o.Name)]++
		}
		ids[string(o.Kind)+" "+o.ID] = true
		uid := o.Labels[entity.TagUID]
		if uid == "" {
			uid = entity.TagValue(o.Tags, entity.TagUID)
		}
		byUID[uid] = append(byUID[uid], string(o.Kind)+" "+o.ID)
	}
	for key, n := range byName {
		if n > 1 {
			problems = append(problems, fmt.Sprintf("%d entities named %s in Konnect", n, key))
		}
	}
	for uid, found := range byUID {
		if len(found) > 1 {
			problems = append(problems, fmt.Sprintf("%d entities in Konnect carry k8s-uid %q: %s", len(found), uid, strings.Join(found, ", ")))
		}
	}
	if len(all) != entities || len(byUID) != entities {
		problems = append(problems, fmt.Sprintf("Konnect holds %d entities (%d distinct k8s-uids), want %d", len(all), len(byUID), entities))
	}
	simKind := map[string]konnectsim.Kind{
		"KonnectGatewayControlPlane": konnectsim.KindControlPlane, "KongService": konnectsim.KindService,
		"KongRoute": konnectsim.KindRoute, "KongConsumer": konnectsim.KindConsumer,
	}
	for _, o := range objs {
		if k, ok := simKind[o.kind]; ok && !ids[string(k)+" "+o.id] {
			problems = append(problems, fmt.Sprintf("%s %s: status.id %q is not in Konnect", o.kind, o.name, o.id))
		}
	}
	sort.Strings(problems)
	return problems
}

// checkNothingLeftInKonnect: after the deletes, no entity is left in Konnect.
func (s *scenario) checkNothingLeftInKonnect() {
	s.t.Helper()
	left := map[string]int{}
	for _, o := range s.sim.Objects() {
		left[string(o.Kind)]++
	}
	if len(left) == 0 {
		return
	}
	kinds := make([]string, 0, len(left))
	for k, n := range left {
		kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(kinds)
	s.t.Errorf("left in Konnect after every object was deleted: %s", strings.Join(kinds, ", "))
}
