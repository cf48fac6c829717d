package entity

import (
	"context"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
	"github.com/almproject/alm/controllers/konnect/konnectmetrics"
)

// Options configure the loop of one kind.
type Options struct {
	Clients konnectapi.ClientFactory
	// SyncPeriod is how long an unchanged object waits before Konnect is brought back to its declared state.
	SyncPeriod time.Duration
	Mode       DriftMode
	// PartReads is the budget of periodic part checks per control plane, kind and sync period (see partreads.go);
	// <= 0 checks every object's parts every period.
	PartReads int
	// TagScheme is the identity the entities are given (default TagSchemeV1).
	TagScheme TagScheme
	// Controller are the controller's options (workers, backoff).
	Controller controller.Options
	// FollowAll re-reconcile objects of every kind when an object they do not name changes (a KongReferenceGrant).
	FollowAll []FollowAll
}

// FollowAll re-reconciles the objects of a kind in the namespaces Namespaces returns (the kind's name given) when a
// Target object changes; "" lists every namespace (cluster-scoped objects).
type FollowAll struct {
	Target     client.Object
	Namespaces func(kind string, target client.Object) []string
}

// Setup registers the loop of one kind with mgr: its reference indexes, the watches that re-reconcile an object
// as soon as what it references changes, and (DriftModeList) its drift scanner.
func Setup[T client.Object](ctx context.Context, mgr manager.Manager, kind Kind[T], opts Options) error {
	id, err := IdentityOf(mgr.GetScheme(), kind.New(), opts.TagScheme)
	if err != nil {
		return err
	}
	r := &Reconciler[T]{
		Identity:   id,
		Client:     mgr.GetClient(),
		Kind:       kind,
		Clients:    opts.Clients,
		Recorder:   mgr.GetEventRecorder("konnect-operator"),
		SyncPeriod: opts.SyncPeriod,
		Mode:       opts.Mode,
		Now:        time.Now,
		PartReads:  opts.PartReads,
	}
	// Reconciles run only on the leader; from now on no other process creates entities for our objects.
	if err := mgr.Add(manager.RunnableFunc(func(context.Context) error {
		r.since.Store(time.Now().UnixNano())
		return nil
	})); err != nil {
		return err
	}
	konnectmetrics.CountObjects(kind.Name(), r.countProgrammed)
	b := ctrl.NewControllerManagedBy(mgr).Named(strings.ToLower(kind.Name())).For(kind.New()).WithOptions(opts.Controller)
	for _, ri := range kind.Indexes() {
		if err := mgr.GetFieldIndexer().IndexField(ctx, kind.New(), ri.Field, ri.Extract); err != nil {
			return err
		}
		b = b.Watches(ri.Target, handler.EnqueueRequestsFromMapFunc(r.referrers(ri)))
	}
	for _, f := range kind.Follows {
		b = b.Watches(f.Target, handler.EnqueueRequestsFromMapFunc(r.follow(f)))
	}
	for _, f := range opts.FollowAll {
		b = b.Watches(f.Target, handler.EnqueueRequestsFromMapFunc(r.followAll(f)))
	}
	if opts.Mode == DriftModeList {
		scanner := &driftScanner[T]{r: r, events: make(chan event.GenericEvent, 1024)}
		if err := mgr.Add(scanner); err != nil {
			return err
		}
		b = b.WatchesRawSource(source.Channel(scanner.events, &handler.EnqueueRequestForObject{}))
	}
	return b.Complete(r)
}

// referrers maps a referenced object to the objects of the kind that reference it through the index ri.
func (r *Reconciler[T]) referrers(ri RefIndex) handler.MapFunc {
	field := ri.Field
	return func(ctx context.Context, target client.Object) []reconcile.Request {
		list := r.Kind.NewList()
		// Only the names are read: no copies of the cached objects.
		opts := []client.ListOption{client.InNamespace(target.GetNamespace()), client.MatchingFields{field: target.GetName()}, client.UnsafeDisableDeepCopy}
		if ri.Key != nil {
			opts = []client.ListOption{client.MatchingFields{field: ri.Key(target)}, client.UnsafeDisableDeepCopy}
		}
		if err := r.List(ctx, list, opts...); err != nil {
			return nil
		}
		items := r.Kind.Items(list)
		reqs := make([]reconcile.Request, 0, len(items))
		for _, o := range items {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
		}
		return reqs
	}
}

// follow maps a followed object to the objects of the kind that depend on it.
func (r *Reconciler[T]) follow(f Follow) handler.MapFunc {
	return func(ctx context.Context, target client.Object) []reconcile.Request {
		keys := f.Map(ctx, r.Client, target)
		reqs := make([]reconcile.Request, 0, len(keys))
		for _, k := range keys {
			reqs = append(reqs, reconcile.Request{NamespacedName: k})
		}
		return reqs
	}
}

// followAll maps a followed object to the objects of the kind in the namespaces it names.
func (r *Reconciler[T]) followAll(f FollowAll) handler.MapFunc {
	return func(ctx context.Context, target client.Object) []reconcile.Request {
		var reqs []reconcile.Request
		seen := map[string]bool{}
		for _, ns := range f.Namespaces(r.Kind.Name(), target) {
			if seen[ns] {
				continue
			}
			seen[ns] = true
			list := r.Kind.NewList()
			if err := r.List(ctx, list, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
				continue
			}
			for _, o := range r.Kind.Items(list) {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
			}
		}
		return reqs
	}
}

// countProgrammed counts the objects of the kind this operator manages (from the cache) by the status of their
// Programmed condition, for the metrics endpoint.
func (r *Reconciler[T]) countProgrammed(ctx context.Context) (map[string]int, error) {
	list := r.Kind.NewList()
	if err := r.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for _, obj := range r.Kind.Items(list) {
		if !r.Kind.Managed(obj) {
			continue
		}
		status := "Unknown"
		if c := apimeta.FindStatusCondition(*r.Kind.Conditions(obj), konnectv1alpha1.ConditionProgrammed); c != nil {
			status = string(c.Status)
		}
		counts[status]++
	}
	return counts, nil
}
