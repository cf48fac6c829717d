// Package authconfig is the loop of KonnectAPIAuthConfiguration: it checks the token with Konnect, records the
// organization it belongs to with the APIAuthValid condition, and keeps the configuration while control planes
// still need it to delete their entities.
package authconfig

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
	"github.com/almproject/alm/internal/status"
)

// Index names.
const (
	// IndexControlPlanesByAuth finds the KonnectGatewayControlPlanes that use an auth configuration (by its name).
	IndexControlPlanesByAuth = "konnect.authRef"
	// indexSecretRef finds the auth configurations that read their token from a Secret ("namespace/name").
	indexSecretRef = "konnect.secretRef"
)

// Valid says whether objects may use the auth configuration: its token was accepted by Konnect.
func Valid(a *konnectv1alpha1.KonnectAPIAuthConfiguration) bool {
	return apimeta.IsStatusConditionTrue(a.Status.Conditions, konnectv1alpha1.ConditionAPIAuthValid) && a.Status.OrganizationID != ""
}

// Reconciler checks KonnectAPIAuthConfigurations: it asks Konnect which organization the token belongs
// to and records it with the APIAuthValid condition. Objects that use the configuration wait for it.
type Reconciler struct {
	client.Client
	Clients    konnectapi.ClientFactory
	Recorder   events.EventRecorder
	SyncPeriod time.Duration
}

// FinalizerInUse keeps an auth configuration while control planes use it, so that deleting it first (or deleting the
// whole namespace) still lets them delete their Konnect entities instead of leaving them orphaned in Konnect.
const FinalizerInUse = "konnect.alm.dev/auth-in-use"

func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	auth := &konnectv1alpha1.KonnectAPIAuthConfiguration{}
	if err := r.Get(ctx, req.NamespacedName, auth); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !auth.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.release(ctx, auth)
	}
	if controllerutil.AddFinalizer(auth, FinalizerInUse) {
		if err := r.Update(ctx, auth); err != nil {
			return ctrl.Result{}, ignoreConflict(fmt.Errorf("adding finalizer to %s: %w", klog.KObj(auth), err))
		}
	}
	if err := r.holdSecret(ctx, auth); err != nil {
		return ctrl.Result{}, err
	}
	orig := auth.DeepCopy()
	res, err := r.check(ctx, auth)
	return res, errors.Join(err, status.Patch(ctx, r, orig, auth))
}

// release drops the in-use finalizer once no control plane refers to the auth configuration any more; the watch on
// control planes brings the configuration back when the last one goes.
func (r *Reconciler) release(ctx context.Context, auth *konnectv1alpha1.KonnectAPIAuthConfiguration) error {
	if !controllerutil.ContainsFinalizer(auth, FinalizerInUse) {
		return nil
	}
	cps := &konnectv1alpha2.KonnectGatewayControlPlaneList{}
	if err := r.List(ctx, cps, client.InNamespace(auth.Namespace), client.MatchingFields{IndexControlPlanesByAuth: auth.Name}); err != nil {
		return err
	}
	if len(cps.Items) > 0 {
		ctrl.LoggerFrom(ctx).Info("Waiting for the control planes that use it to be deleted", "controlPlanes", len(cps.Items))
		return nil
	}
	if err := r.releaseSecret(ctx, auth); err != nil {
		return err
	}
	controllerutil.RemoveFinalizer(auth, FinalizerInUse)
	return ignoreConflict(client.IgnoreNotFound(r.Update(ctx, auth)))
}

// check validates the token. The token itself never goes into a message: Konnect's errors do not echo it.
func (r *Reconciler) check(ctx context.Context, auth *konnectv1alpha1.KonnectAPIAuthConfiguration) (ctrl.Result, error) {
	reason, msg, err := r.invalid(ctx, auth)
	if err != nil {
		return ctrl.Result{}, err
	}
	if reason != "" {
		// Nothing is sent to Konnect. A change of the object or of its Secret (watched) brings it back.
		r.setValid(auth, false, reason, msg)
		r.Recorder.Eventf(auth, nil, corev1.EventTypeWarning, reason, "Validate", "%s", msg)
		return ctrl.Result{}, nil
	}
	api, serverURL, err := r.Clients.API(ctx, auth)
	if err != nil {
		r.setValid(auth, false, konnectv1alpha1.ReasonInvalidSpec, err.Error())
		if errors.Is(err, konnectapi.ErrInvalidAuth) {
			return ctrl.Result{}, reconcile.TerminalError(err)
		}
		// e.g. the Secret does not exist yet: its watch brings us back, the backoff too.
		return ctrl.Result{}, err
	}
	auth.Status.ServerURL = serverURL
	org, err := api.OrganizationID(ctx)
	switch {
	case konnectapi.IsUnauthorized(err):
		r.setValid(auth, false, konnectv1alpha1.ReasonInvalid, fmt.Sprintf("Konnect at %s rejected the token", serverURL))
		r.Recorder.Eventf(auth, nil, corev1.EventTypeWarning, konnectv1alpha1.ReasonInvalid, "Validate", "Konnect at %s rejected the token", serverURL)
		// The token may be fixed in Konnect without any change here: check again after the sync period.
		return ctrl.Result{RequeueAfter: r.SyncPeriod}, nil
	case err != nil:
		if !apimeta.IsStatusConditionTrue(auth.Status.Conditions, konnectv1alpha1.ConditionAPIAuthValid) {
			r.setValid(auth, false, konnectv1alpha1.ReasonUnreachable, fmt.Sprintf("could not check the token: %v", err))
		}
		return ctrl.Result{}, err
	}
	auth.Status.OrganizationID = org
	r.setValid(auth, true, konnectv1alpha1.ReasonValid, fmt.Sprintf("the token belongs to organization %s", org))
	return ctrl.Result{RequeueAfter: r.SyncPeriod}, nil
}

func (r *Reconciler) setValid(auth *konnectv1alpha1.KonnectAPIAuthConfiguration, ok bool, reason, msg string) {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	apimeta.SetStatusCondition(&auth.Status.Conditions, metav1.Condition{
		Type: konnectv1alpha1.ConditionAPIAuthValid, Status: status, Reason: reason, Message: msg, ObservedGeneration: auth.Generation,
	})
}

// ignoreConflict drops a conflict: our copy was stale, so the newer version's watch event is still on its way and
// brings the object back to the queue.
func ignoreConflict(err error) error {
	if apierrors.IsConflict(err) {
		return nil
	}
	return err
}
