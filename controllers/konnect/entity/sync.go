package entity

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/bodydiff"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
	"github.com/almproject/alm/controllers/konnect/konnectmetrics"
)

// The steps of one pass over an object that is not being deleted, in the seed's order: check the references,
// create the entity, update it when the object changed, update it when the sync period passed. Deletion is in
// finalize.

// pass is what one reconcile of an object brings to Konnect, gathered by the first steps.
type pass struct {
	refs      Refs
	api       konnectapi.API
	serverURL string
	desired   map[string]any
	now       time.Time
	// parts are the declared parts (nil: none to sync), partChecks the checks that stay, gone the conditions to
	// remove once the parts are synced (until then they say what is left to clean).
	parts        *declaredParts
	partChecks   []RefCheck
	gone         []RefCheck
	partsBlocked bool
	// hash is the fingerprint of what the object declares (StateHash).
	hash string
	// neverSent: the object had no finalizer when read, so no process can have sent it to Konnect yet.
	neverSent bool
}

// sync brings Konnect to the object's declared state, recording the outcome in the object's status. neverSent says
// the object had no finalizer when read (see pass).
func (r *Reconciler[T]) sync(ctx context.Context, obj T, neverSent bool) (ctrl.Result, error) {
	p, res, err := r.references(ctx, obj)
	if p == nil {
		return res, err
	}
	p.neverSent = neverSent
	if id := r.mirrorID(obj); id != "" {
		return r.syncMirror(ctx, obj, p, id)
	}
	if err := r.readParts(ctx, obj, p); err != nil {
		return ctrl.Result{}, err
	}
	st, err := r.leavePreviousControlPlane(ctx, obj, p)
	if err != nil {
		return r.failed(obj, konnectv1alpha1.ReasonDeleteFailed, "delete from the previous control plane", err)
	}
	action, due, remaining := r.decide(obj, st, p)
	partsDue := r.partsDue(obj, due)
	if action == ActionWait && (p.parts == nil || p.partsBlocked || !partsDue) {
		// Konnect is in the declared state (e.g. an earlier write succeeded but a later status write failed).
		r.Kind.SetState(obj, st)
		return r.programmed(obj, p, st.ID, remaining)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("syncing with Konnect", "action", action.String(), "kind", r.Kind.Name())
	id, entity, fail := r.write(ctx, obj, p, action, st.ID)
	if fail != nil {
		return r.failed(obj, fail.reason, fail.op, fail.err)
	}
	if _, drifted := r.drifted.Load(obj.GetUID()); drifted && action == ActionUpdate {
		konnectmetrics.DriftCorrected(r.Kind.Name()) // found changed or missing in Konnect, and written back
	}
	st = r.record(obj, p, id, entity)
	if err := r.syncParts(ctx, obj, p, st, entity, action != ActionWait); err != nil {
		return r.failed(obj, konnectv1alpha1.ReasonUpdateFailed, "update of "+r.Kind.Name()+" parts", err)
	}
	return r.programmed(obj, p, st.ID, r.SyncPeriod)
}

// references resolves the object's references, the Konnect client and the body it declares. A nil pass means the
// reconcile stops here with res and err: a reference is invalid (no Konnect call; the watch on the referenced
// object brings the object back when it becomes ready, and Recheck if that event is lost), the client cannot be made, or the spec is invalid.
func (r *Reconciler[T]) references(ctx context.Context, obj T) (*pass, ctrl.Result, error) {
	refs, checks, err := r.Kind.Resolve(ctx, r.Client, obj)
	if err != nil {
		return nil, ctrl.Result{}, fmt.Errorf("resolving references of %s %s: %w", r.Kind.Name(), klog.KObj(obj), err)
	}
	if failed := r.applyChecks(obj, checks); failed != nil {
		r.setProgrammed(obj, false, konnectv1alpha1.ReasonInvalidReference, failed.Message)
		return nil, ctrl.Result{RequeueAfter: Recheck}, nil
	}
	api, serverURL, err := r.Clients.API(ctx, refs.Auth)
	if err != nil {
		r.setProgrammed(obj, false, konnectv1alpha1.ReasonInvalidReference, "the KonnectAPIAuthConfiguration cannot be used: "+err.Error())
		return nil, ctrl.Result{}, err
	}
	desired, err := r.Kind.Desired(obj, refs)
	if err != nil {
		r.setProgrammed(obj, false, konnectv1alpha1.ReasonInvalidSpec, err.Error())
		return nil, ctrl.Result{}, reconcile.TerminalError(err)
	}
	r.Identity.apply(desired)
	// The status keeps microseconds: a time written there compares equal to itself read back.
	now := r.Now().Truncate(time.Microsecond)
	return &pass{refs: refs, api: api, serverURL: serverURL, desired: desired, now: now}, ctrl.Result{}, nil
}

// readParts reads the object's declared parts, if its kind has any, and sets their conditions; a condition that
// no longer applies goes once the parts are synced.
func (r *Reconciler[T]) readParts(ctx context.Context, obj T, p *pass) error {
	parts, checks, err := r.declaredParts(ctx, obj)
	if err != nil {
		return fmt.Errorf("reading the parts of %s %s: %w", r.Kind.Name(), klog.KObj(obj), err)
	}
	p.parts = parts
	p.partChecks, p.gone = splitAbsent(checks)
	p.partsBlocked = r.applyChecks(obj, p.partChecks) != nil
	if parts == nil {
		r.applyChecks(obj, p.gone)
	}
	p.hash = r.stateHash(obj, p.refs, p.desired, parts)
	return nil
}

// stateHash is StateHash of the object, with the kind's Hashed form of the body.
func (r *Reconciler[T]) stateHash(obj T, refs Refs, desired map[string]any, parts *declaredParts) string {
	if r.Kind.Hashed != nil {
		desired = r.Kind.Hashed(refs, desired)
	}
	return StateHash(obj, refs.ControlPlaneID, desired, parts.hash())
}

// declaredParts reads the object's declared parts; nil when its kind has none or there is nothing to sync.
func (r *Reconciler[T]) declaredParts(ctx context.Context, obj T) (*declaredParts, []RefCheck, error) {
	if r.Kind.Parts == nil {
		return nil, nil, nil
	}
	return r.Kind.Parts.read(ctx, r.Client, obj)
}

// leavePreviousControlPlane returns the object's Konnect state. An object moved to another control plane before
// it was Programmed is first removed from the old one, and starts again with no state.
func (r *Reconciler[T]) leavePreviousControlPlane(ctx context.Context, obj T, p *pass) (State, error) {
	st := r.state(obj)
	if st.ID == "" || st.ControlPlaneID == "" || st.ControlPlaneID == p.refs.ControlPlaneID {
		return st, nil
	}
	if err := r.deleteEntity(ctx, obj); err != nil {
		return st, err
	}
	return State{}, nil
}

// decide is the seed's flowchart (Decide) with the facts of this object, and when the sync period is due.
func (r *Reconciler[T]) decide(obj T, st State, p *pass) (action Action, due bool, remaining time.Duration) {
	var last *time.Time
	if st.Sync.LastSyncTime != nil {
		last = &st.Sync.LastSyncTime.Time
	}
	due, remaining = syncDue(last, p.now, r.SyncPeriod)
	_, drifted := r.drifted.Load(obj.GetUID())
	return Decide(Facts{
		HasID:   st.ID != "" && st.ControlPlaneID == p.refs.ControlPlaneID,
		Changed: st.Sync.ObservedHash != p.hash,
		Drifted: drifted,
		SyncDue: due,
		Mode:    r.Mode,
	}), due, remaining
}

// failure is a failed Konnect call: the Programmed reason it sets and the operation it names.
type failure struct {
	reason, op string
	err        error
}

// write creates or updates the entity id, as decided, and returns its ID and the entity as Konnect answered (nil
// for ActionWait: only the parts are due).
func (r *Reconciler[T]) write(ctx context.Context, obj T, p *pass, action Action, id string) (string, *konnectapi.Entity, *failure) {
	if action == ActionUpdate {
		body := p.desired
		if v, ok := r.drifted.Load(obj.GetUID()); ok {
			// Drift found by a list: the identity of another tag scheme, listed with it, stays.
			body = bodydiff.KeepForeignIdentity(body, v.(drift).actual)
		}
		e, err := p.api.Update(ctx, r.Kind.Type(), p.refs.ControlPlaneID, id, body)
		switch {
		case konnectapi.IsNotFound(err) && r.Kind.RecreateWhenGone:
			// Deleted out of band and cannot be re-created with its old ID: create a new one.
			action = ActionCreate
		case err != nil:
			return id, nil, &failure{konnectv1alpha1.ReasonUpdateFailed, "update", err}
		default:
			return id, &e, nil
		}
	}
	if action != ActionCreate {
		return id, nil, nil
	}
	if o := adoptOptions(obj); o != nil {
		e, fail := r.adoptExisting(ctx, obj, p, o)
		if fail != nil {
			return "", nil, fail
		}
		return e.ID, &e, nil
	}
	e, err := r.create(ctx, obj, p)
	if err != nil {
		return "", nil, &failure{konnectv1alpha1.ReasonCreateFailed, "create", err}
	}
	r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, "Created", "Create", "Created %s %s in Konnect", r.Kind.Type(), e.ID)
	return e.ID, &e, nil
}

// record puts the state of entity id into the object (with what Konnect reports about it) and remembers it as
// written.
func (r *Reconciler[T]) record(obj T, p *pass, id string, entity *konnectapi.Entity) State {
	r.observe(obj, entity)
	st := State{
		ID: id, OrgID: p.refs.Auth.Status.OrganizationID, ServerURL: p.serverURL, ControlPlaneID: p.refs.ControlPlaneID,
		ServiceID: p.refs.ServiceID, ParentID: p.refs.ParentID,
		Sync: konnectv1alpha1.SyncStatus{ObservedHash: p.hash, LastSyncTime: &metav1.MicroTime{Time: p.now}},
	}
	r.Kind.SetState(obj, st)
	r.written.Store(obj.GetUID(), written{state: st, observed: entity})
	r.attempted.Delete(obj.GetUID())
	r.drifted.Delete(obj.GetUID())
	return st
}

// syncParts brings the entity's parts to the declared ones, unless there are none or a reference blocks them. A
// failure leaves the declaration unrecorded: the parts are retried (with an update of the entity).
func (r *Reconciler[T]) syncParts(ctx context.Context, obj T, p *pass, st State, entity *konnectapi.Entity, changed bool) error {
	if p.parts == nil || p.partsBlocked {
		return nil
	}
	if err := p.parts.sync(ctx, p.api, p.refs, st.ID, changed); err != nil {
		st.Sync.ObservedHash = ""
		r.Kind.SetState(obj, st)
		r.written.Store(obj.GetUID(), written{state: st, observed: entity})
		return err
	}
	r.applyChecks(obj, p.gone)
	return nil
}

// programmed reports the entity id in the declared state (unless parts are blocked) and when to come back.
func (r *Reconciler[T]) programmed(obj T, p *pass, id string, after time.Duration) (ctrl.Result, error) {
	r.setProgrammed(obj, true, konnectv1alpha1.ReasonProgrammed, fmt.Sprintf("%s %s is in the declared state", r.Kind.Type(), id))
	r.blockedParts(obj, p.partChecks)
	return ctrl.Result{RequeueAfter: after}, nil
}

// failed records a failed Konnect call. Konnect refusing the request (4xx) will not change by retrying: the
// object waits for a change. Anything else is retried with backoff.
func (r *Reconciler[T]) failed(obj T, reason, op string, err error) (ctrl.Result, error) {
	msg := fmt.Sprintf("Konnect %s failed: %v", op, err)
	if isClaimed(err) {
		// Waits for the other object to let go of the entity (or this one to change): checked once a sync period.
		r.setProgrammed(obj, false, konnectv1alpha1.ReasonEntityClaimed, err.Error())
		r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, konnectv1alpha1.ReasonEntityClaimed, op, err.Error())
		return ctrl.Result{RequeueAfter: r.SyncPeriod}, nil
	}
	r.setProgrammed(obj, false, reason, msg)
	r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, reason, op, msg)
	if konnectapi.IsPermanent(err) || isMismatch(err) {
		return ctrl.Result{}, reconcile.TerminalError(fmt.Errorf("%s %s: %w", r.Kind.Name(), klog.KObj(obj), err))
	}
	return ctrl.Result{}, fmt.Errorf("%s %s: %w", r.Kind.Name(), klog.KObj(obj), err)
}

// observe copies what Konnect reports about the entity into the object's status, if the kind does that.
func (r *Reconciler[T]) observe(obj T, e *konnectapi.Entity) {
	if r.Kind.Observe != nil && e != nil && e.Body != nil {
		r.Kind.Observe(obj, *e)
	}
}
