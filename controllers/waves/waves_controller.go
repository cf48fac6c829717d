// Package waves is the rollout loop: for a CatalogSource with spec.rollout, it upgrades the installs (AppTypes) of
// each package it covers to a newly published version in waves — a canary, a soak, then growing waves with at most
// maxConcurrent upgrading at once — and halts the rollout of that version everywhere when one install fails. It
// creates the new OperatorVersions itself (the upgradetrigger loop leaves the packages a policy covers to it), so
// that no install upgrades before its wave. Everything it decides is recomputed from the cluster at each reconcile:
// the installs' OperatorVersions (annotated with the rollout they belong to) and the CatalogSource's
// status.rollouts, where a halt is kept. It writes status.rollouts, the AppTypes' RolloutHalted condition and an
// Event for each wave started and finished and each halt. It runs in the catalog group of loops.
package waves

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/blang/semver/v4"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/index"
	"github.com/almproject/alm/controllers/internal/fieldindex"
	"github.com/almproject/alm/controllers/registry"
	"github.com/almproject/alm/internal/status"
)

// Name is the loop's name (--loops, the controller and its events).
const Name = "waves"

// Reconciler rolls new versions out in waves.
type Reconciler struct {
	client.Client
	Registry *registry.Registry
	Recorder events.EventRecorder
	// Namespace is ALM's own namespace, whose CatalogSources serve every namespace.
	Namespace string
	// VersionFinalizers are the finalizers the OperatorVersions it creates carry from the start (loops.Options).
	VersionFinalizers []string
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

// member is one install of a package: its AppType, its versions, its resolution, and where it stands.
type member struct {
	at      *operatorsv1alpha1.AppType
	all     []operatorsv1alpha1.OperatorVersion
	res     index.Result
	target  Target
	install Install
}

// Reconcile plans and advances the rollouts of one CatalogSource.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cs := &operatorsv1alpha1.CatalogSource{}
	if err := r.Get(ctx, req.NamespacedName, cs); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if cs.Spec.Rollout == nil && len(cs.Status.Rollouts) == 0 {
		return ctrl.Result{}, nil
	}
	now := r.now()
	var rollouts []operatorsv1alpha1.RolloutStatus
	var requeue time.Duration
	if cs.Spec.Rollout != nil && cs.DeletionTimestamp.IsZero() {
		for _, pkg := range packages(cs) {
			got, after, err := r.reconcilePackage(ctx, cs, pkg, now)
			if err != nil {
				return ctrl.Result{}, err
			}
			rollouts = append(rollouts, got...)
			if after > 0 && (requeue == 0 || after < requeue) {
				requeue = after
			}
		}
	} else if err := r.clearHalts(ctx, cs); err != nil {
		return ctrl.Result{}, err
	}
	orig := cs.DeepCopy()
	cs.Status.Rollouts = rollouts
	return ctrl.Result{RequeueAfter: requeue}, status.Patch(ctx, r, orig, cs)
}

// reconcilePackage plans the rollouts of one package (one per version its installs are offered), starts the
// upgrades they admit, announces what changed, and marks the AppTypes of a halted rollout.
func (r *Reconciler) reconcilePackage(ctx context.Context, cs *operatorsv1alpha1.CatalogSource, pkg string, now time.Time) (
	[]operatorsv1alpha1.RolloutStatus, time.Duration, error) {
	members, err := r.members(ctx, cs, pkg)
	if err != nil {
		return nil, 0, err
	}
	groups := map[string][]*member{}
	var targets []Target
	for _, m := range members {
		if groups[m.target.Bundle] == nil {
			targets = append(targets, m.target)
		}
		groups[m.target.Bundle] = append(groups[m.target.Bundle], m)
	}
	sort.Slice(targets, func(i, j int) bool { return targets[i].Version.LT(targets[j].Version) })
	var out []operatorsv1alpha1.RolloutStatus
	var requeue time.Duration
	byBundle := map[string]*operatorsv1alpha1.RolloutStatus{}
	for _, t := range targets {
		group := groups[t.Bundle]
		installs := make([]Install, len(group))
		for i, m := range group {
			installs[i] = m.install
		}
		prev := find(cs.Status.Rollouts, pkg, t.Version.String())
		plan := Decide(cs.Spec.Rollout, pkg, t.Bundle, t.Version.String(), installs, prev, now)
		ctrl.LoggerFrom(ctx).V(1).Info("Rollout planned", "package", pkg, "version", t.Version.String(), "phase", plan.Status.Phase,
			"wave", plan.Status.Wave, "upgraded", plan.Status.Upgraded, "upgrading", plan.Status.Upgrading, "start", len(plan.Start))
		if err := r.start(ctx, cs, group, plan); err != nil {
			return nil, 0, err
		}
		r.announce(cs, prev, &plan.Status)
		out = append(out, plan.Status)
		byBundle[t.Bundle] = &out[len(out)-1]
		if plan.RequeueAfter > 0 && (requeue == 0 || plan.RequeueAfter < requeue) {
			requeue = plan.RequeueAfter
		}
	}
	out = append(out, keptHalts(cs.Status.Rollouts, pkg, out)...)
	return out, requeue, r.markAppTypes(ctx, cs, members, byBundle)
}

// clearHalts removes the RolloutHalted condition from the AppTypes of the packages cs rolled out, once cs has no
// policy any more (or is being deleted): nothing is halted then.
func (r *Reconciler) clearHalts(ctx context.Context, cs *operatorsv1alpha1.CatalogSource) error {
	done := map[string]bool{}
	for _, ro := range cs.Status.Rollouts {
		if done[ro.Package] {
			continue
		}
		done[ro.Package] = true
		members, err := r.members(ctx, cs, ro.Package)
		if err != nil {
			return err
		}
		if err := r.markAppTypes(ctx, cs, members, nil); err != nil {
			return err
		}
	}
	return nil
}

// members lists the installs of pkg that cs may serve (its namespace's, or every namespace's when it is in ALM's
// namespace) and classifies each. It reads the cache without copies: nothing it returns is written.
func (r *Reconciler) members(ctx context.Context, cs *operatorsv1alpha1.CatalogSource, pkg string) ([]*member, error) {
	ns := registry.Serves(cs.Namespace, r.Namespace)
	ats := &operatorsv1alpha1.AppTypeList{}
	if err := r.List(ctx, ats, client.InNamespace(ns), client.MatchingFields{fieldindex.AppTypePackage: pkg}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	if len(ats.Items) == 0 {
		return nil, nil
	}
	ovs := &operatorsv1alpha1.OperatorVersionList{}
	if err := r.List(ctx, ovs, client.InNamespace(ns), client.MatchingFields{fieldindex.OperatorVersionPackage: pkg}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	byNamespace := map[string][]operatorsv1alpha1.OperatorVersion{}
	for _, ov := range ovs.Items {
		byNamespace[ov.Namespace] = append(byNamespace[ov.Namespace], ov)
	}
	canary, err := canarySelector(cs.Spec.Rollout)
	if err != nil {
		return nil, err
	}
	catalog := registry.Name(types.NamespacedName{Namespace: cs.Namespace, Name: cs.Name})
	ix := r.Registry.Index()
	var out []*member
	for i := range ats.Items {
		at := &ats.Items[i]
		if !at.DeletionTimestamp.IsZero() {
			continue
		}
		m := &member{at: at, all: byNamespace[at.Namespace]}
		var chosen *index.Candidate
		if req, err := r.Registry.Request(at, r.Namespace); err == nil {
			if cur := installedOf(m.all); cur != nil {
				req.From, req.FromName = cur.Spec.Version.String(), cur.Name
			}
			if m.res, err = ix.Resolve(req); err == nil {
				chosen = m.res.Chosen
			}
		}
		var ok bool
		if m.target, m.install, ok = Classify(at, m.all, chosen, catalog); !ok {
			continue
		}
		m.install.Canary = canary != nil && canary.Matches(labelSet(at.Labels))
		out = append(out, m)
	}
	return out, nil
}

// startParallel is how many OperatorVersions one reconcile creates at once when a wave starts.
const startParallel = 8

// start creates the next OperatorVersion of every install plan admits, a few at a time.
func (r *Reconciler) start(ctx context.Context, cs *operatorsv1alpha1.CatalogSource, group []*member, plan Plan) error {
	if len(plan.Start) == 0 {
		return nil
	}
	byKey := make(map[types.NamespacedName]*member, len(group))
	for _, m := range group {
		byKey[m.install.Key] = m
	}
	errs := make([]error, len(plan.Start))
	slots := make(chan struct{}, startParallel)
	var wg sync.WaitGroup
	for i, key := range plan.Start {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			errs[i] = r.upgrade(ctx, cs, byKey[key], &plan.Status)
		}()
	}
	wg.Wait()
	return joinErrors(errs)
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// find is the rollout of pkg at version in rollouts, nil when there is none.
func find(rollouts []operatorsv1alpha1.RolloutStatus, pkg, version string) *operatorsv1alpha1.RolloutStatus {
	for i := range rollouts {
		if rollouts[i].Package == pkg && rollouts[i].Version == version {
			return &rollouts[i]
		}
	}
	return nil
}

// keptHalts are the halted rollouts of pkg in prev that are not planned any more (every install moved on to a newer
// version) and stay listed until a rollout of a newer version of pkg is complete: why the version was stopped.
func keptHalts(prev []operatorsv1alpha1.RolloutStatus, pkg string, planned []operatorsv1alpha1.RolloutStatus) []operatorsv1alpha1.RolloutStatus {
	var out []operatorsv1alpha1.RolloutStatus
	for _, h := range prev {
		if h.Package != pkg || h.Phase != operatorsv1alpha1.RolloutHalted || find(planned, pkg, h.Version) != nil {
			continue
		}
		hv, err := semver.ParseTolerant(h.Version)
		if err != nil {
			continue
		}
		superseded := false
		for _, p := range planned {
			if v, err := semver.ParseTolerant(p.Version); err == nil && v.GT(hv) && p.Phase == operatorsv1alpha1.RolloutComplete {
				superseded = true
			}
		}
		if !superseded {
			out = append(out, h)
		}
	}
	return out
}

// packages are the packages cs's policy covers that it serves.
func packages(cs *operatorsv1alpha1.CatalogSource) []string {
	var out []string
	for _, p := range cs.Status.Packages {
		if cs.Spec.Rollout.Covers(p.Name) {
			out = append(out, p.Name)
		}
	}
	return out
}

// SetupWithManager registers the loop: CatalogSources, and the AppTypes and OperatorVersions of the namespaces
// a CatalogSource with a rollout policy serves.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := fieldindex.Register(context.Background(), mgr.GetCache()); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).Named(Name).
		For(&operatorsv1alpha1.CatalogSource{}).
		Watches(&operatorsv1alpha1.OperatorVersion{}, coalesced(func(ctx context.Context, obj client.Object) []reconcile.Request {
			return r.policies(ctx, obj.GetNamespace(), obj.(*operatorsv1alpha1.OperatorVersion).Spec.PackageName)
		})).
		Watches(&operatorsv1alpha1.AppType{}, coalesced(func(ctx context.Context, obj client.Object) []reconcile.Request {
			return r.policies(ctx, obj.GetNamespace(), obj.(*operatorsv1alpha1.AppType).Spec.Package)
		})).
		Complete(r)
}

// coalesceWindow is how long the installs' changes are gathered before the CatalogSource they belong to is
// reconciled: a reconcile weighs every install the policy covers, and while a wave runs its installs change many
// times a second.
const coalesceWindow = time.Second

// coalesced enqueues the CatalogSources m maps an object to coalesceWindow after the object's change; the changes
// of one window make one reconcile (the queue keeps the earliest time of a request it holds). The CatalogSource's
// own changes (For) are reconciled at once.
func coalesced(m handler.MapFunc) handler.EventHandler {
	add := func(ctx context.Context, obj client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		for _, req := range m(ctx, obj) {
			q.AddAfter(req, coalesceWindow)
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, e.Object, q)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, e.ObjectOld, q) // an AppType moved to another package leaves the old one's rollout
			add(ctx, e.ObjectNew, q)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, e.Object, q)
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, e.Object, q)
		},
	}
}

// policies are the CatalogSources with a rollout policy for pkg that serve namespace.
func (r *Reconciler) policies(ctx context.Context, namespace, pkg string) []reconcile.Request {
	list := &operatorsv1alpha1.CatalogSourceList{}
	if err := r.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, cs := range list.Items {
		if (cs.Spec.Rollout.Covers(pkg) || len(cs.Status.Rollouts) > 0) && (cs.Namespace == namespace || cs.Namespace == r.Namespace) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: cs.Namespace, Name: cs.Name}})
		}
	}
	return out
}
