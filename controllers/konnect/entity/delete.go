package entity

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
	"github.com/almproject/alm/internal/status"
)

// referrerPoll is how often a mirror being deleted checks whether the objects inside it are gone.
const referrerPoll = 2 * time.Second

// finalize deletes the Konnect entity, then drops the finalizer. When the entity cannot exist any more (never
// created, its control plane object or auth configuration is gone) the finalizer goes without a call, so
// deleting a parent never leaves children stuck. Until the finalizer goes, the status is written once, here.
func (r *Reconciler[T]) finalize(ctx context.Context, obj T) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(obj, Finalizer) {
		return ctrl.Result{}, nil
	}
	orig := obj.DeepCopyObject().(T)
	if res, err := r.deleteOrWait(ctx, obj); err != nil || res.RequeueAfter > 0 {
		return res, errors.Join(err, status.Patch(ctx, r, orig, obj))
	}
	controllerutil.RemoveFinalizer(obj, Finalizer)
	if err := r.Update(ctx, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{RequeueAfter: Recheck}, ignoreConflict(err)
	}
	r.attempted.Delete(obj.GetUID())
	r.drifted.Delete(obj.GetUID())
	r.partGrants.Delete(obj.GetUID())
	r.written.Delete(obj.GetUID())
	return ctrl.Result{}, nil
}

// deleteOrWait deletes the entity from Konnect. A mirror has nothing to delete there, but the objects inside the
// mirrored control plane must go first: until they have, it polls (RequeueAfter).
func (r *Reconciler[T]) deleteOrWait(ctx context.Context, obj T) (ctrl.Result, error) {
	if r.mirrorID(obj) != "" {
		n, err := r.Kind.Mirror.Referrers(ctx, r.Client, obj)
		if err != nil || n == 0 {
			return ctrl.Result{}, err
		}
		r.setProgrammed(obj, false, konnectv1alpha1.ReasonDeleting, fmt.Sprintf(
			"waiting for the %d objects in this control plane to be deleted: Konnect keeps a mirrored control plane, and anything left in it", n))
		return ctrl.Result{RequeueAfter: referrerPoll}, nil
	}
	if err := r.deleteEntity(ctx, obj); err != nil {
		msg := fmt.Sprintf("Konnect delete failed: %v", err)
		r.setProgrammed(obj, false, konnectv1alpha1.ReasonDeleteFailed, msg)
		r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, konnectv1alpha1.ReasonDeleteFailed, "Delete", msg)
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// deleteEntity deletes the object's entity from Konnect, if there is one; a missing one counts as deleted.
func (r *Reconciler[T]) deleteEntity(ctx context.Context, obj T) error {
	st := r.state(obj)
	auth, cpID, err := r.Kind.DeletionScope(ctx, r.Client, obj, st)
	if err != nil || auth == nil {
		return err
	}
	api, _, err := r.Clients.API(ctx, auth)
	if err != nil {
		if errors.Is(err, konnectapi.ErrInvalidAuth) || apierrors.IsNotFound(err) {
			// Not an error to retry: no client can be made from this configuration, so the entity cannot be reached.
			ctrl.LoggerFrom(ctx).Info("cannot reach Konnect to delete the entity: the auth configuration is unusable; dropping the finalizer", "error", err.Error())
			return nil
		}
		return err
	}
	if st.ID == "" {
		return r.deleteByTag(ctx, api, obj, cpID)
	}
	if err := api.Delete(ctx, r.Kind.Type(), cpID, st.ID); err != nil && !konnectapi.IsNotFound(err) {
		return err
	}
	r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, "Deleted", "Delete", "Deleted %s %s from Konnect", r.Kind.Type(), st.ID)
	return nil
}

// deleteByTag deletes what a create may have made without its answer reaching us, found by the object's tag.
func (r *Reconciler[T]) deleteByTag(ctx context.Context, api konnectapi.API, obj T, cpID string) error {
	if !r.mayHaveBeenCreated(obj) {
		return nil
	}
	found, err := api.List(ctx, r.Kind.Type(), cpID, UIDTag(obj))
	if err != nil {
		return err
	}
	for _, e := range found {
		if err := api.Delete(ctx, r.Kind.Type(), cpID, e.ID); err != nil && !konnectapi.IsNotFound(err) {
			return err
		}
	}
	return nil
}
