// Package entity is the one reconciliation loop of every Konnect entity kind, the loop of the seed
// konnect-reconciliation-loop.md: check the references, create the entity, update it when the object changed,
// update it when the sync period passed (or, in list mode, when the drift scanner found it changed in Konnect),
// delete it with the object. A Kind (a Mapping plus optional Mirror, Observe and Parts) adapts one Kubernetes kind;
// konnectapi.API is the only way to Konnect.
package entity

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/almproject/alm/controllers/konnect/konnectapi"
	"github.com/almproject/alm/internal/status"
)

// Finalizer keeps an object until its Konnect entity is deleted.
const Finalizer = "konnect.alm.dev/delete"

// lookupMargin covers clock skew between the API server and the operator when deciding whether an object may
// have been sent to Konnect by an earlier process.
const lookupMargin = 5 * time.Second

// mirrorID is the Konnect ID the object mirrors, "" when it is not a mirror (or its kind has none).
func (r *Reconciler[T]) mirrorID(obj T) string {
	if r.Kind.Mirror == nil {
		return ""
	}
	return r.Kind.Mirror.MirrorID(obj)
}

// Reconciler is the one reconciliation loop of every Konnect kind (the seed's flowchart), parameterised by a Kind.
type Reconciler[T client.Object] struct {
	client.Client
	Kind     Kind[T]
	Clients  konnectapi.ClientFactory
	Recorder events.EventRecorder
	// SyncPeriod is how long an unchanged object waits before Konnect is brought back to its declared state.
	SyncPeriod time.Duration
	Mode       DriftMode
	// Identity is the identity tags (labels) added to what the Kind declares: the tag scheme (see TagScheme).
	Identity Identity
	// Now is the clock (tests may fix it).
	Now func() time.Time
	// PartReads is how many objects of one control plane get their parts checked per sync period although nothing
	// changed (DriftModeList; <= 0: every object, every period). See partreads.go.
	PartReads int

	// since is when this process started reconciling: objects created later cannot have been sent to Konnect by
	// another process, so their first create needs no look-up.
	since atomic.Int64 // unix nanoseconds; 0 until leadership is held, which means "look up every create"
	// attempted holds the objects this process sent a create for; their next create looks up the tag first.
	attempted sync.Map // types.UID -> struct{}
	// drifted holds objects whose entity the drift scanner found missing or different.
	drifted sync.Map // types.UID -> drift
	// partGrants holds the objects whose parts the drift scanner granted a periodic check (see partreads.go).
	partGrants sync.Map // types.UID -> struct{}
	// written holds the state last written for an object until the cache shows it: a reconcile that reads an older
	// copy (e.g. triggered by a watch before our own status write arrived) must not create the entity again, and
	// a status written from that copy must carry the whole state, not only the condition.
	written sync.Map // types.UID -> written
}

// written is what a reconcile last wrote to an object's status: its Konnect state and the entity Konnect answered
// (for kinds that report fields of it, e.g. a control plane's cluster type and endpoints).
type written struct {
	state    State
	observed *konnectapi.Entity
	// persisted: the status write carrying state succeeded, so the cache will show it.
	persisted bool
}

// Reconcile is: get -> deletion or finalizer -> work -> one status write (only if it changed).
func (r *Reconciler[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.Kind.New()
	if err := r.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if r.behindOwnWrite(obj) {
		// A copy older than our own last status write (e.g. the event of our finalizer update, read before the
		// event of the status write): nothing to do with it, and a status written from it would only be refused as
		// stale. The event of our write is on its way and brings the object back; if it is lost (an API server
		// restart), the recheck does.
		return ctrl.Result{RequeueAfter: Recheck}, nil
	}
	if !obj.GetDeletionTimestamp().IsZero() || !r.Kind.Managed(obj) {
		// An object that is not (or no longer) this operator's is let go like a deleted one.
		return r.finalize(ctx, obj)
	}
	// Konnect is only ever called for an object that carries the finalizer: one read without it was never sent.
	neverSent := controllerutil.AddFinalizer(obj, Finalizer)
	if neverSent {
		if err := r.Update(ctx, obj); err != nil {
			return ctrl.Result{RequeueAfter: Recheck}, ignoreConflict(fmt.Errorf("adding finalizer to %s %s: %w", r.Kind.Name(), klog.KObj(obj), err))
		}
	}
	orig := obj.DeepCopyObject().(T)
	res, err := r.sync(ctx, obj, neverSent)
	version := obj.GetResourceVersion()
	perr := status.Patch(ctx, r, orig, obj)
	if obj.GetResourceVersion() != version {
		r.persisted(obj)
	}
	return res, errors.Join(err, perr)
}

// behindOwnWrite says whether obj, as read, is older than a status this process wrote for it successfully.
func (r *Reconciler[T]) behindOwnWrite(obj T) bool {
	v, ok := r.written.Load(obj.GetUID())
	if !ok || !v.(written).persisted {
		return false
	}
	last := r.Kind.State(obj).Sync.LastSyncTime
	return last == nil || last.Before(v.(written).state.Sync.LastSyncTime)
}

// persisted notes that the state written for obj reached the API server (obj is the object as it answered).
func (r *Reconciler[T]) persisted(obj T) {
	v, ok := r.written.Load(obj.GetUID())
	if !ok {
		return
	}
	w := v.(written)
	if last := r.Kind.State(obj).Sync.LastSyncTime; last != nil && w.state.Sync.LastSyncTime != nil && last.Equal(w.state.Sync.LastSyncTime) {
		w.persisted = true
		r.written.Store(obj.GetUID(), w)
	}
}

// Recheck is how soon an object that waits on the cluster is looked at again although no watch event may come: its
// own status write is not in the cache yet, a write of it was refused as stale, or a reference is not ready (its
// parent not Programmed yet). A lost or late event (an API server restart) then delays it by at most this; a recheck
// reads the cache only and calls Konnect only when there is something to do. 10s: well within the sync period (1m).
const Recheck = 10 * time.Second

// ignoreConflict drops a conflict: our copy was stale, so the newer version's watch event is still on its way
// and brings the object back to the queue. Returning the error would only add backoff (and `written` keeps what
// this reconcile did in Konnect).
func ignoreConflict(err error) error {
	if apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// state is the object's Konnect state, or the state this process last wrote for it if the copy read is older: a
// reconcile that reads an older copy (e.g. triggered by a watch before our own status write arrived, or after
// that write was refused as stale) must not create the entity a second time. The written state is put back into
// obj, so that whatever status this reconcile writes carries the ID, server URL and organization together with
// the Programmed condition.
func (r *Reconciler[T]) state(obj T) State {
	st := r.Kind.State(obj)
	v, ok := r.written.Load(obj.GetUID())
	if !ok {
		return st
	}
	w := v.(written)
	if st.ID != "" && st.Sync.LastSyncTime != nil && !st.Sync.LastSyncTime.Before(w.state.Sync.LastSyncTime) {
		r.written.Delete(obj.GetUID())
		return st
	}
	r.Kind.SetState(obj, w.state)
	r.observe(obj, w.observed)
	return w.state
}
