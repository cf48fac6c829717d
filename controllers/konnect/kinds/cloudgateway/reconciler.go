package cloudgateway

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
	"github.com/almproject/alm/internal/status"
)

// Condition reasons of an entity that is not ready.
const (
	// ReasonProvisioning: Konnect is provisioning the entity; the message names its state.
	ReasonProvisioning = "Provisioning"
	// ReasonProvisioningFailed: Konnect reports why the entity could not be provisioned.
	ReasonProvisioningFailed = "ProvisioningFailed"
	// StateReady is the state in which a network or transit gateway is Programmed.
	StateReady = "ready"
)

// DefaultPoll is how soon an entity that is being provisioned is read again: Konnect takes minutes.
const DefaultPoll = 30 * time.Second

// observed is what Konnect answered about an entity.
type observed struct {
	ID, Name, State string
	// Failed is Konnect's reason why provisioning failed ("" when it did not).
	Failed string
	// Ready: the entity is usable (Programmed); Pending: something Konnect reports is still changing, so it is
	// read again after Poll.
	Ready, Pending bool
	// Body is the kind's own answer (the configuration's data plane groups).
	Body any
	// Entity is the entity as Konnect answered it, for the kind's drift.
	Entity any
}

// scope is where an object's entity lives: the auth configuration and the Konnect ID of its parent (network or
// control plane; "" for a network).
type scope struct {
	auth   *konnectv1alpha1.KonnectAPIAuthConfiguration
	parent string
	// networks are the Konnect IDs of the networks a configuration's data plane groups name, by object name.
	networks map[string]string
}

// refWatch re-reconciles the objects whose index field names a changed target object (in its namespace).
type refWatch struct {
	target  client.Object
	index   string
	extract func(client.Object) []string
}

// kind adapts one cloud gateway kind to the loop.
type kind[T client.Object] struct {
	name    string
	newObj  func() T
	newList func() client.ObjectList
	items   func(client.ObjectList) []client.Object
	conds   func(T) *[]metav1.Condition
	id      func(T) string
	// record puts the entity (nil: none) into the status.
	record  func(obj T, es konnectv1alpha1.KonnectEntityStatus, parent string, o *observed)
	resolve func(ctx context.Context, c client.Reader, obj T) (scope, []entity.RefCheck, error)
	// deletion is the scope through which the entity is deleted; a nil auth: it cannot be, or need not be.
	deletion func(ctx context.Context, c client.Reader, obj T) (scope, error)
	create   func(ctx context.Context, api konnectapi.API, obj T, s scope) (observed, error)
	get      func(ctx context.Context, api konnectapi.API, obj T, s scope) (observed, error)
	del      func(ctx context.Context, api konnectapi.API, obj T, s scope) error
	watches  []refWatch

	// read is the plain read of the entity status.id names, for adoption (nil: get).
	read func(ctx context.Context, api konnectapi.API, obj T, s scope) (observed, error)
	// lookup finds the entity a create whose answer was lost made, by the spec's name (nil: the kind's create
	// cannot leave a duplicate); found false: there is none.
	lookup func(ctx context.Context, api konnectapi.API, obj T, s scope) (o observed, found bool, err error)
	// drift says in which fields the entity Konnect answered differs from the spec (nil: none are compared).
	drift func(obj T, actual observed, s scope) differences
	// update sends the fields Konnect can change (nil: none).
	update func(ctx context.Context, api konnectapi.API, obj T, s scope) (observed, error)
}

// reconciler is the loop of a cloud gateway kind: deletion or finalizer, references, create or read, one status
// write. Programmed follows what Konnect reports, not the write: see the package comment.
type reconciler[T client.Object] struct {
	client.Client
	kind       kind[T]
	clients    konnectapi.ClientFactory
	syncPeriod time.Duration
	poll       time.Duration

	// created holds the ID of each entity this process created until the object's status shows it: a reconcile
	// that reads an older copy (the event of the finalizer update, before the status write) must not create the
	// entity a second time.
	created sync.Map // types.UID -> string
}

func (r *reconciler[T]) setup(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	b := ctrl.NewControllerManagedBy(mgr).Named(r.kind.name).WithOptions(opts).For(r.kind.newObj())
	for _, w := range r.kind.watches {
		if err := mgr.GetFieldIndexer().IndexField(ctx, r.kind.newObj(), w.index, w.extract); err != nil {
			return err
		}
		b = b.Watches(w.target, handler.EnqueueRequestsFromMapFunc(r.referrers(w.index)))
	}
	return b.Complete(r)
}

// referrers maps a changed target to the objects that name it through index.
func (r *reconciler[T]) referrers(index string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		list := r.kind.newList()
		if err := r.List(ctx, list, client.InNamespace(o.GetNamespace()), client.MatchingFields{index: o.GetName()}); err != nil {
			return nil
		}
		var reqs []reconcile.Request
		for _, item := range r.kind.items(list) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(item)})
		}
		return reqs
	}
}

// Reconcile: deletion or finalizer, then sync and one status write.
func (r *reconciler[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.kind.newObj()
	if err := r.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return r.finalize(ctx, obj)
	}
	if controllerutil.AddFinalizer(obj, entity.Finalizer) {
		if err := r.Update(ctx, obj); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	orig := obj.DeepCopyObject().(T)
	res, err := r.sync(ctx, obj)
	return res, errors.Join(err, status.Patch(ctx, r, orig, obj))
}

// sync checks the references, creates the entity or reads it, and reports it.
func (r *reconciler[T]) sync(ctx context.Context, obj T) (ctrl.Result, error) {
	s, checks, err := r.kind.resolve(ctx, r, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	if failed := r.applyChecks(obj, checks); failed != nil {
		r.setProgrammed(obj, metav1.ConditionFalse, konnectv1alpha1.ReasonInvalidReference, failed.Message)
		return ctrl.Result{RequeueAfter: entity.Recheck}, nil
	}
	api, serverURL, err := r.clients.API(ctx, s.auth)
	if err != nil {
		r.setProgrammed(obj, metav1.ConditionFalse, konnectv1alpha1.ReasonInvalidReference, "the KonnectAPIAuthConfiguration cannot be used: "+err.Error())
		return ctrl.Result{}, err
	}
	id := r.kind.id(obj)
	if v, ok := r.created.Load(obj.GetUID()); ok && id == "" {
		id = v.(string)
	} else if ok {
		r.created.Delete(obj.GetUID())
	}
	var o observed
	if id == "" {
		if o, err = r.takeOverOrCreate(ctx, api, obj, s); err != nil {
			return r.createFailure(obj, err)
		}
		r.created.Store(obj.GetUID(), o.ID)
	} else {
		r.kind.record(obj, konnectv1alpha1.KonnectEntityStatus{ID: id}, s.parent, nil)
		o, err = r.kind.get(ctx, api, obj, s)
		if konnectapi.IsNotFound(err) {
			// Deleted in Konnect: made anew at once.
			r.kind.record(obj, konnectv1alpha1.KonnectEntityStatus{}, "", nil)
			r.created.Delete(obj.GetUID())
			r.setProgrammed(obj, metav1.ConditionFalse, konnectv1alpha1.ReasonPending, "the entity no longer exists in Konnect: creating it again")
			return ctrl.Result{Requeue: true}, nil
		}
		if err == nil {
			o, err = r.converge(ctx, api, obj, s, o)
		}
		if err != nil {
			r.setProgrammed(obj, metav1.ConditionFalse, konnectv1alpha1.ReasonUpdateFailed, "Konnect update failed: "+err.Error())
			return ctrl.Result{}, failure(err)
		}
	}
	r.kind.record(obj, konnectv1alpha1.KonnectEntityStatus{ID: o.ID, ServerURL: serverURL, OrgID: s.auth.Status.OrganizationID}, s.parent, &o)
	return r.report(obj, o), nil
}

// takeOverOrCreate adopts the entity spec.adopt names, or takes over the one a lost create made (the kind's
// look-up by name), or creates one.
func (r *reconciler[T]) takeOverOrCreate(ctx context.Context, api konnectapi.API, obj T, s scope) (observed, error) {
	if o := adoptOptions(obj); o != nil {
		return r.adopt(ctx, api, obj, s, o)
	}
	if r.kind.lookup != nil {
		found, ok, err := r.kind.lookup(ctx, api, obj, s)
		if err == nil && ok {
			found, err = r.takeOverFound(ctx, obj, s, found)
		}
		if err == nil && ok {
			r.kind.record(obj, konnectv1alpha1.KonnectEntityStatus{ID: found.ID}, s.parent, nil)
			found, err = r.converge(ctx, api, obj, s, found)
		}
		if err != nil || ok {
			return found, err
		}
	}
	return r.kind.create(ctx, api, obj, s)
}

// createFailure reports a failed create, look-up or adoption.
func (r *reconciler[T]) createFailure(obj T, err error) (ctrl.Result, error) {
	var ae *adoptError
	if adoptOptions(obj) != nil || errors.As(err, &ae) {
		return r.adoptFailure(obj, err)
	}
	r.setProgrammed(obj, metav1.ConditionFalse, konnectv1alpha1.ReasonCreateFailed, "Konnect create failed: "+err.Error())
	if errors.As(err, new(*nameTaken)) {
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	return ctrl.Result{}, failure(err)
}

// report sets Programmed from what Konnect reports and says when to read the entity again: after Poll while it is
// being provisioned, after the sync period otherwise.
func (r *reconciler[T]) report(obj T, o observed) ctrl.Result {
	poll := r.poll
	if poll <= 0 {
		poll = DefaultPoll
	}
	switch {
	case o.Failed != "":
		r.setProgrammed(obj, metav1.ConditionFalse, ReasonProvisioningFailed, fmt.Sprintf("%s is %s in Konnect: %s", o.ID, o.State, o.Failed))
		return ctrl.Result{RequeueAfter: r.syncPeriod}
	case !o.Ready:
		r.setProgrammed(obj, metav1.ConditionFalse, ReasonProvisioning, fmt.Sprintf("%s is %s in Konnect", o.ID, o.State))
		return ctrl.Result{RequeueAfter: poll}
	}
	r.setProgrammed(obj, metav1.ConditionTrue, konnectv1alpha1.ReasonProgrammed, fmt.Sprintf("%s is %s in Konnect", o.ID, o.State))
	if o.Pending {
		return ctrl.Result{RequeueAfter: poll}
	}
	return ctrl.Result{RequeueAfter: r.syncPeriod}
}

// failure: a refusal (4xx) waits for a change of the object; anything else is retried with backoff.
func failure(err error) error {
	if konnectapi.IsPermanent(err) {
		return reconcile.TerminalError(err)
	}
	return err
}

// finalize deletes the entity from Konnect (a missing one is gone already) and lets the object go.
func (r *reconciler[T]) finalize(ctx context.Context, obj T) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(obj, entity.Finalizer) {
		return ctrl.Result{}, nil
	}
	if r.kind.id(obj) != "" {
		s, err := r.kind.deletion(ctx, r, obj)
		if err != nil {
			return ctrl.Result{}, err
		}
		if s.auth != nil {
			api, _, err := r.clients.API(ctx, s.auth)
			if err != nil {
				return ctrl.Result{}, err
			}
			if err := r.kind.del(ctx, api, obj, s); err != nil && !konnectapi.IsNotFound(err) {
				return ctrl.Result{}, err
			}
		}
	}
	controllerutil.RemoveFinalizer(obj, entity.Finalizer)
	return ctrl.Result{}, client.IgnoreNotFound(r.Update(ctx, obj))
}

// applyChecks sets one condition per checked reference and returns the first failed one.
func (r *reconciler[T]) applyChecks(obj T, checks []entity.RefCheck) *entity.RefCheck {
	for i, c := range checks {
		st, reason := metav1.ConditionTrue, konnectv1alpha1.ReasonValid
		if !c.OK {
			st, reason = metav1.ConditionFalse, konnectv1alpha1.ReasonInvalidReference
		}
		if c.Reason != "" {
			reason = c.Reason
		}
		apimeta.SetStatusCondition(r.kind.conds(obj), metav1.Condition{Type: c.Type, Status: st, Reason: reason, Message: c.Message, ObservedGeneration: obj.GetGeneration()})
		if !c.OK {
			return &checks[i]
		}
	}
	return nil
}

func (r *reconciler[T]) setProgrammed(obj T, st metav1.ConditionStatus, reason, msg string) {
	apimeta.SetStatusCondition(r.kind.conds(obj), metav1.Condition{Type: konnectv1alpha1.ConditionProgrammed, Status: st, Reason: reason, Message: msg, ObservedGeneration: obj.GetGeneration()})
}

// Options configure the cloud gateway loops.
type Options struct {
	Clients    konnectapi.ClientFactory
	SyncPeriod time.Duration
	// Poll is how soon an entity being provisioned is read again (DefaultPoll when <= 0).
	Poll       time.Duration
	Controller controller.Options
}

// Setup registers the loops of the three cloud gateway kinds.
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	c := mgr.GetClient()
	if err := (&reconciler[*networkObj]{Client: c, kind: networkKind(), clients: opts.Clients, syncPeriod: opts.SyncPeriod, poll: opts.Poll}).setup(ctx, mgr, opts.Controller); err != nil {
		return err
	}
	if err := (&reconciler[*transitGatewayObj]{Client: c, kind: transitGatewayKind(), clients: opts.Clients, syncPeriod: opts.SyncPeriod, poll: opts.Poll}).setup(ctx, mgr, opts.Controller); err != nil {
		return err
	}
	return (&reconciler[*configurationObj]{Client: c, kind: configurationKind(), clients: opts.Clients, syncPeriod: opts.SyncPeriod, poll: opts.Poll}).setup(ctx, mgr, opts.Controller)
}
