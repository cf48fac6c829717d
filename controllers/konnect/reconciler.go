package konnect

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	"github.com/almproject/alm/controllers/internal/status"
)

// Finalizer keeps an object until its Konnect entity is deleted.
const Finalizer = "konnect.alm.dev/delete"

// lookupMargin covers clock skew between the API server and the operator when deciding whether an object may
// have been sent to Konnect by an earlier process.
const lookupMargin = 5 * time.Second

// referrerPoll is how often a mirror being deleted checks whether the objects inside it are gone.
const referrerPoll = 2 * time.Second

// Reconciler is the one reconciliation loop of every Konnect kind (the seed's flowchart), parameterised by a Kind.
type Reconciler[T client.Object] struct {
	client.Client
	Kind     Kind[T]
	Clients  ClientFactory
	Recorder events.EventRecorder
	// SyncPeriod is how long an unchanged object waits before Konnect is brought back to its declared state.
	SyncPeriod time.Duration
	Mode       DriftMode
	// Now is the clock (tests may fix it).
	Now func() time.Time

	// since is when this process started reconciling: objects created later cannot have been sent to Konnect by
	// another process, so their first create needs no look-up.
	since atomic.Int64 // unix nanoseconds; 0 until leadership is held, which means "look up every create"
	// attempted holds the objects this process sent a create for; their next create looks up the tag first.
	attempted sync.Map // types.UID -> struct{}
	// drifted holds objects whose entity the drift scanner found missing or different.
	drifted sync.Map // types.UID -> struct{}
	// written holds the state last written for an object until the cache shows it: a reconcile that reads an older
	// copy (e.g. triggered by a watch before our own status write arrived) must not create the entity again, and
	// a status written from that copy must carry the whole state, not only the condition.
	written sync.Map // types.UID -> written
}

// written is what a reconcile last wrote to an object's status: its Konnect state and the entity Konnect answered
// (for kinds that report fields of it, e.g. a control plane's cluster type and endpoints).
type written struct {
	state    State
	observed *Entity
}

// Reconcile is: get -> deletion or finalizer -> work -> one status write (only if it changed).
func (r *Reconciler[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.Kind.New()
	if err := r.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !obj.GetDeletionTimestamp().IsZero() || !r.Kind.Managed(obj) {
		// An object that is not (or no longer) this operator's is let go like a deleted one.
		return r.finalize(ctx, obj)
	}
	if controllerutil.AddFinalizer(obj, Finalizer) {
		if err := r.Update(ctx, obj); err != nil {
			return ctrl.Result{}, ignoreConflict(fmt.Errorf("adding finalizer to %s %s: %w", r.Kind.Name(), klog.KObj(obj), err))
		}
	}
	orig := obj.DeepCopyObject().(T)
	res, err := r.sync(ctx, obj)
	return res, errors.Join(err, status.Patch(ctx, r, orig, obj))
}

// ignoreConflict drops a conflict: our copy was stale, so the newer version's watch event is still on its way
// and brings the object back to the queue. Returning the error would only add backoff (and `written` keeps what
// this reconcile did in Konnect).
func ignoreConflict(err error) error {
	if apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// sync brings Konnect to the object's declared state, recording the outcome in the object's status.
func (r *Reconciler[T]) sync(ctx context.Context, obj T) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	refs, checks, err := r.Kind.Resolve(ctx, r.Client, obj)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("resolving references of %s %s: %w", r.Kind.Name(), klog.KObj(obj), err)
	}
	if failed := r.applyChecks(obj, checks); failed != nil {
		// No Konnect call; the watch on the referenced object brings us back when it becomes ready.
		r.setProgrammed(obj, false, konnectv1alpha1.ReasonInvalidReference, failed.Message)
		return ctrl.Result{}, nil
	}
	api, serverURL, err := r.Clients.API(ctx, refs.Auth)
	if err != nil {
		r.setProgrammed(obj, false, konnectv1alpha1.ReasonInvalidReference, "the KonnectAPIAuthConfiguration cannot be used: "+err.Error())
		return ctrl.Result{}, err
	}
	desired, err := r.Kind.Desired(obj, refs)
	if err != nil {
		r.setProgrammed(obj, false, konnectv1alpha1.ReasonInvalidSpec, err.Error())
		return ctrl.Result{}, reconcile.TerminalError(err)
	}

	if m, ok := any(r.Kind).(mirrorKind[T]); ok {
		if id := m.MirrorID(obj); id != "" {
			return r.syncMirror(ctx, api, obj, refs, serverURL, id)
		}
	}
	parts, partChecks, err := r.parts(ctx, obj)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("reading the parts of %s %s: %w", r.Kind.Name(), klog.KObj(obj), err)
	}
	// A condition that no longer applies goes once the parts are synced: until then it says what is left to clean.
	partChecks, gone := splitAbsent(partChecks)
	partsBlocked := r.applyChecks(obj, partChecks) != nil
	if parts == nil {
		r.applyChecks(obj, gone)
	}

	st := r.state(obj)
	if st.ID != "" && st.CPID != "" && st.CPID != refs.CPID {
		// The object was moved to another control plane before it was Programmed: remove it from the old one.
		if err := r.deleteEntity(ctx, obj); err != nil {
			return r.failed(obj, konnectv1alpha1.ReasonDeleteFailed, "delete from the previous control plane", err)
		}
		st = State{}
	}
	hash := StateHash(obj, refs.CPID, desired, parts)
	now := r.Now()
	var last *time.Time
	if st.Sync.LastSyncTime != nil {
		last = &st.Sync.LastSyncTime.Time
	}
	due, remaining := syncDue(last, now, r.SyncPeriod)
	_, drifted := r.drifted.Load(obj.GetUID())
	action := Decide(Facts{
		HasID:   st.ID != "" && st.CPID == refs.CPID,
		Changed: st.Sync.ObservedHash != hash,
		Drifted: drifted,
		SyncDue: due,
		Mode:    r.Mode,
	})
	if action == ActionWait && (parts == nil || partsBlocked || !due) {
		// Konnect is in the declared state (e.g. an earlier write succeeded but a later status write failed).
		r.Kind.SetState(obj, st)
		r.setProgrammed(obj, true, konnectv1alpha1.ReasonProgrammed, fmt.Sprintf("%s %s is in the declared state", r.Kind.Type(), st.ID))
		r.blockedParts(obj, partChecks)
		return ctrl.Result{RequeueAfter: remaining}, nil
	}
	log.V(1).Info("syncing with Konnect", "action", action.String(), "kind", r.Kind.Name())

	id := st.ID
	var entity *Entity
	if action == ActionUpdate {
		e, err := api.Update(ctx, r.Kind.Type(), refs.CPID, id, desired)
		if IsNotFound(err) && r.Kind.Type() == TypeControlPlane {
			// Deleted out of band: a control plane cannot be re-created with its old ID, so create a new one.
			action, id = ActionCreate, ""
		} else if err != nil {
			return r.failed(obj, konnectv1alpha1.ReasonUpdateFailed, "update", err)
		}
		entity = &e
	}
	if action == ActionCreate {
		e, err := r.create(ctx, api, obj, refs, desired)
		if err != nil {
			return r.failed(obj, konnectv1alpha1.ReasonCreateFailed, "create", err)
		}
		id, entity = e.ID, &e
		r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, "Created", "Create", "Created %s %s in Konnect", r.Kind.Type(), id)
	}
	if o, ok := any(r.Kind).(observerKind[T]); ok && entity != nil && entity.Body != nil {
		o.Observe(obj, *entity)
	}

	st = State{
		ID: id, OrgID: refs.Auth.Status.OrganizationID, ServerURL: serverURL, CPID: refs.CPID, ServiceID: refs.ServiceID,
		Sync: konnectv1alpha1.SyncStatus{ObservedHash: hash, LastSyncTime: &metav1.MicroTime{Time: now}},
	}
	r.Kind.SetState(obj, st)
	r.written.Store(obj.GetUID(), written{state: st, observed: entity})
	r.attempted.Delete(obj.GetUID())
	r.drifted.Delete(obj.GetUID())
	if parts != nil && !partsBlocked {
		if err := any(r.Kind).(partsKind[T]).SyncParts(ctx, api, refs, id, parts, action != ActionWait); err != nil {
			// The entity is in place; the parts are retried (with an update of the entity: the hash stays unrecorded).
			st.Sync.ObservedHash = ""
			r.Kind.SetState(obj, st)
			r.written.Store(obj.GetUID(), written{state: st, observed: entity})
			return r.failed(obj, konnectv1alpha1.ReasonUpdateFailed, "update of "+r.Kind.Name()+" parts", err)
		}
		r.applyChecks(obj, gone)
	}
	r.setProgrammed(obj, true, konnectv1alpha1.ReasonProgrammed, fmt.Sprintf("%s %s is in the declared state", r.Kind.Type(), id))
	r.blockedParts(obj, partChecks)
	return ctrl.Result{RequeueAfter: r.SyncPeriod}, nil
}

// parts reads the object's declared parts, if its kind has any.
func (r *Reconciler[T]) parts(ctx context.Context, obj T) (any, []RefCheck, error) {
	pk, ok := any(r.Kind).(partsKind[T])
	if !ok {
		return nil, nil, nil
	}
	return pk.Parts(ctx, r.Client, obj)
}

// blockedParts reports parts that could not be synced: the entity is in Konnect, but not as declared.
func (r *Reconciler[T]) blockedParts(obj T, checks []RefCheck) {
	if failed := blocking(checks); failed != nil {
		r.setProgrammed(obj, false, konnectv1alpha1.ReasonInvalidReference, failed.Message)
	}
}

// syncMirror looks up the entity a mirror stands for; it never writes to Konnect. It checks again every sync
// period, so a mirrored control plane deleted in Konnect shows up as not Programmed.
func (r *Reconciler[T]) syncMirror(ctx context.Context, api API, obj T, refs Refs, serverURL, id string) (ctrl.Result, error) {
	st := r.state(obj)
	if st.ID == id && st.Sync.LastSyncTime != nil {
		if due, remaining := syncDue(&st.Sync.LastSyncTime.Time, r.Now(), r.SyncPeriod); !due {
			r.setProgrammed(obj, true, konnectv1alpha1.ReasonProgrammed, fmt.Sprintf("mirrors %s %s", r.Kind.Type(), id))
			return ctrl.Result{RequeueAfter: remaining}, nil
		}
	}
	e, err := api.GetControlPlane(ctx, id)
	if IsNotFound(err) {
		r.Kind.SetState(obj, State{})
		r.written.Delete(obj.GetUID())
		r.setProgrammed(obj, false, konnectv1alpha1.ReasonNotFound, fmt.Sprintf("%s %s does not exist in Konnect (organization %s)", r.Kind.Type(), id, refs.Auth.Status.OrganizationID))
		return ctrl.Result{RequeueAfter: r.SyncPeriod}, nil
	}
	if err != nil {
		return r.failed(obj, konnectv1alpha1.ReasonUpdateFailed, "get", err)
	}
	if o, ok := any(r.Kind).(observerKind[T]); ok {
		o.Observe(obj, e)
	}
	st = State{ID: id, OrgID: refs.Auth.Status.OrganizationID, ServerURL: serverURL,
		Sync: konnectv1alpha1.SyncStatus{LastSyncTime: &metav1.MicroTime{Time: r.Now()}}}
	r.Kind.SetState(obj, st)
	r.written.Store(obj.GetUID(), written{state: st, observed: &e})
	r.setProgrammed(obj, true, konnectv1alpha1.ReasonProgrammed, fmt.Sprintf("mirrors %s %s", r.Kind.Type(), id))
	return ctrl.Result{RequeueAfter: r.SyncPeriod}, nil
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
	if o, ok := any(r.Kind).(observerKind[T]); ok && w.observed != nil && w.observed.Body != nil {
		o.Observe(obj, *w.observed)
	}
	return w.state
}

// create creates the entity, or adopts the one an earlier attempt created (found by its k8s-uid tag) if one may
// exist, so that a create whose response was lost never leaves a duplicate.
func (r *Reconciler[T]) create(ctx context.Context, api API, obj T, refs Refs, desired map[string]any) (Entity, error) {
	if r.mayHaveBeenCreated(obj) {
		if e, err := r.adopt(ctx, api, obj, refs, desired); err != nil || e.ID != "" {
			return e, err
		}
	}
	r.attempted.Store(obj.GetUID(), struct{}{})
	e, err := api.Create(ctx, r.Kind.Type(), refs.CPID, desired)
	if IsConflict(err) || statusCode(err) == http.StatusBadRequest {
		// A unique-name violation (409, or 400 "data constraint error" for core entities) may be our own earlier
		// create; otherwise the name belongs to someone else and the error stands.
		if found, aerr := r.adopt(ctx, api, obj, refs, desired); aerr != nil || found.ID != "" {
			return found, aerr
		}
	}
	return e, err
}

func (r *Reconciler[T]) adopt(ctx context.Context, api API, obj T, refs Refs, desired map[string]any) (Entity, error) {
	found, err := api.List(ctx, r.Kind.Type(), refs.CPID, uidTag(obj))
	if err != nil || len(found) == 0 {
		return Entity{}, err
	}
	e := found[0]
	ctrl.LoggerFrom(ctx).Info("adopting the Konnect entity of an earlier create", "id", e.ID, "kind", r.Kind.Name())
	// The earlier create may have sent an older spec.
	if Drifted(desired, e.Body, r.Kind.DriftKeys()) {
		return api.Update(ctx, r.Kind.Type(), refs.CPID, e.ID, desired)
	}
	return e, nil
}

func (r *Reconciler[T]) mayHaveBeenCreated(obj T) bool {
	if _, ok := r.attempted.Load(obj.GetUID()); ok {
		return true
	}
	// A Programmed condition other than "references invalid" means an earlier reconcile got as far as Konnect.
	if c := apimeta.FindStatusCondition(*r.Kind.Conditions(obj), konnectv1alpha1.ConditionProgrammed); c != nil &&
		c.Reason != konnectv1alpha1.ReasonInvalidReference {
		return true
	}
	since := r.since.Load()
	return since == 0 || obj.GetCreationTimestamp().Time.Before(time.Unix(0, since).Add(lookupMargin))
}

// failed records a failed Konnect call. Konnect refusing the request (4xx) will not change by retrying: the
// object waits for a change. Anything else is retried with backoff.
func (r *Reconciler[T]) failed(obj T, reason, op string, err error) (ctrl.Result, error) {
	msg := fmt.Sprintf("Konnect %s failed: %v", op, err)
	r.setProgrammed(obj, false, reason, msg)
	r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, reason, op, msg)
	if isPermanent(err) {
		return ctrl.Result{}, reconcile.TerminalError(fmt.Errorf("%s %s: %w", r.Kind.Name(), klog.KObj(obj), err))
	}
	return ctrl.Result{}, fmt.Errorf("%s %s: %w", r.Kind.Name(), klog.KObj(obj), err)
}

// applyChecks sets one condition per checked reference and returns the first failed check. Conditions of
// references after a failed one are removed: they were not checked.
func (r *Reconciler[T]) applyChecks(obj T, checks []RefCheck) *RefCheck {
	conds := r.Kind.Conditions(obj)
	var failed *RefCheck
	for i, c := range checks {
		if failed != nil || c.Absent {
			apimeta.RemoveStatusCondition(conds, c.Type)
			continue
		}
		status, reason := metav1.ConditionTrue, konnectv1alpha1.ReasonValid
		if !c.OK {
			status, reason = metav1.ConditionFalse, konnectv1alpha1.ReasonInvalidReference
			if !c.Advisory {
				failed = &checks[i]
			}
		}
		if c.Reason != "" {
			reason = c.Reason
		}
		apimeta.SetStatusCondition(conds, metav1.Condition{Type: c.Type, Status: status, Reason: reason, Message: c.Message, ObservedGeneration: obj.GetGeneration()})
	}
	return failed
}

func (r *Reconciler[T]) setProgrammed(obj T, ok bool, reason, msg string) {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	apimeta.SetStatusCondition(r.Kind.Conditions(obj), metav1.Condition{
		Type: konnectv1alpha1.ConditionProgrammed, Status: status, Reason: reason, Message: msg, ObservedGeneration: obj.GetGeneration(),
	})
}

// finalize deletes the Konnect entity, then drops the finalizer. When the entity cannot exist any more (never
// created, its control plane object or auth configuration is gone) the finalizer goes without a call, so
// deleting a parent never leaves children stuck.
func (r *Reconciler[T]) finalize(ctx context.Context, obj T) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(obj, Finalizer) {
		return ctrl.Result{}, nil
	}
	orig := obj.DeepCopyObject().(T)
	if m, ok := any(r.Kind).(mirrorKind[T]); ok && m.MirrorID(obj) != "" {
		// Nothing to delete in Konnect, but the objects inside the mirrored control plane must go first.
		n, err := m.Referrers(ctx, r.Client, obj)
		if err != nil {
			return ctrl.Result{}, err
		}
		if n > 0 {
			r.setProgrammed(obj, false, konnectv1alpha1.ReasonDeleting, fmt.Sprintf(
				"waiting for the %d objects in this control plane to be deleted: Konnect keeps a mirrored control plane, and anything left in it", n))
			return ctrl.Result{RequeueAfter: referrerPoll}, status.Patch(ctx, r, orig, obj)
		}
	} else if err := r.deleteEntity(ctx, obj); err != nil {
		msg := fmt.Sprintf("Konnect delete failed: %v", err)
		r.setProgrammed(obj, false, konnectv1alpha1.ReasonDeleteFailed, msg)
		r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, konnectv1alpha1.ReasonDeleteFailed, "Delete", msg)
		return ctrl.Result{}, errors.Join(err, status.Patch(ctx, r, orig, obj))
	}
	controllerutil.RemoveFinalizer(obj, Finalizer)
	if err := r.Update(ctx, obj); err != nil {
		return ctrl.Result{}, ignoreConflict(client.IgnoreNotFound(err))
	}
	r.attempted.Delete(obj.GetUID())
	r.drifted.Delete(obj.GetUID())
	r.written.Delete(obj.GetUID())
	return ctrl.Result{}, nil
}

func (r *Reconciler[T]) deleteEntity(ctx context.Context, obj T) error {
	log := ctrl.LoggerFrom(ctx)
	st := r.state(obj)
	auth, cpID, err := r.deletionScope(ctx, obj, st)
	if err != nil || auth == nil {
		return err
	}
	api, _, err := r.Clients.API(ctx, auth)
	if err != nil {
		if errors.Is(err, errInvalidAuth) || apierrors.IsNotFound(err) {
			log.Info("cannot reach Konnect to delete the entity: the auth configuration is unusable; dropping the finalizer", "error", err.Error())
			return nil
		}
		return err
	}
	id := st.ID
	if id == "" {
		if !r.mayHaveBeenCreated(obj) || (r.Kind.Type() != TypeControlPlane && cpID == "") {
			return nil
		}
		// A create may have been sent without its answer reaching us: find it by its tag.
		found, err := api.List(ctx, r.Kind.Type(), cpID, uidTag(obj))
		if err != nil {
			return err
		}
		for _, e := range found {
			if err := api.Delete(ctx, r.Kind.Type(), cpID, e.ID); err != nil && !IsNotFound(err) {
				return err
			}
		}
		return nil
	}
	if err := api.Delete(ctx, r.Kind.Type(), cpID, id); err != nil && !IsNotFound(err) {
		return err
	}
	r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, "Deleted", "Delete", "Deleted %s %s from Konnect", r.Kind.Type(), id)
	return nil
}

// deletionScope finds the auth configuration (and control plane ID) through which the entity is deleted. A nil
// auth means there is nothing that can or needs to be deleted.
func (r *Reconciler[T]) deletionScope(ctx context.Context, obj T, st State) (*konnectv1alpha1.KonnectAPIAuthConfiguration, string, error) {
	authName := ""
	cpID := st.CPID
	if cp, ok := any(obj).(*konnectv1alpha2.KonnectGatewayControlPlane); ok {
		authName = cp.Spec.KonnectConfiguration.APIAuthConfigurationRef.Name
	} else {
		if cpID == "" {
			// Never placed in a control plane: resolve it as a create would have.
			refs, _, err := r.Kind.Resolve(ctx, r.Client, obj)
			if err != nil || refs.Auth == nil {
				return nil, "", err
			}
			return refs.Auth, refs.CPID, nil
		}
		// Find the control plane object by its Konnect ID: if it is gone, Konnect deleted its entities with it.
		cps := &konnectv1alpha2.KonnectGatewayControlPlaneList{}
		if err := r.List(ctx, cps, client.InNamespace(obj.GetNamespace()), client.MatchingFields{indexControlPlaneID: cpID}); err != nil {
			return nil, "", err
		}
		if len(cps.Items) == 0 {
			return nil, "", nil
		}
		authName = cps.Items[0].Spec.KonnectConfiguration.APIAuthConfigurationRef.Name
	}
	auth := &konnectv1alpha1.KonnectAPIAuthConfiguration{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: authName}, auth); err != nil {
		return nil, "", client.IgnoreNotFound(err)
	}
	return auth, cpID, nil
}
