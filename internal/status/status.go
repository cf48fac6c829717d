// Package status writes an object's status the one way every loop (ALM's and the Konnect operator's) does: once at
// the end of a reconcile, only if it changed, and only over the version the loop read.
package status

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Patch writes obj's status as one merge patch from orig, the copy the loop read, to obj. Nothing is sent when they
// are equal. The patch carries orig's resourceVersion (optimistic concurrency), so a status computed from a stale
// copy never overwrites a newer one: the API server refuses it with a conflict, which Patch drops, because the newer
// version's watch event brings the object back to its loop, which then works from a fresh copy. A deleted object
// needs no status either.
func Patch(ctx context.Context, c client.Client, orig, obj client.Object) error {
	_, err := patch(ctx, c, orig, obj)
	return err
}

// RetryAfterConflict is how soon PatchOrRetry has a refused status computed again.
const RetryAfterConflict = time.Second

// PatchOrRetry is Patch for a loop whose own status writes do not bring objects back to it (its watch filters
// status-only updates, e.g. a poller that records each poll): no event follows a refused write, so the result
// asks for the object again after RetryAfterConflict.
func PatchOrRetry(ctx context.Context, c client.Client, orig, obj client.Object) (reconcile.Result, error) {
	conflict, err := patch(ctx, c, orig, obj)
	if conflict {
		return reconcile.Result{RequeueAfter: RetryAfterConflict}, err
	}
	return reconcile.Result{}, err
}

func patch(ctx context.Context, c client.Client, orig, obj client.Object) (conflict bool, err error) {
	if equality.Semantic.DeepEqual(orig, obj) {
		return false, nil
	}
	err = c.Status().Patch(ctx, obj, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	switch {
	case err == nil:
		return false, nil
	case apierrors.IsConflict(err):
		ctrl.LoggerFrom(ctx).V(1).Info("status not written: the object changed since it was read; it is reconciled again",
			"object", klog.KObj(obj))
		return true, nil
	case apierrors.IsNotFound(err):
		return false, nil
	}
	return false, fmt.Errorf("writing the status of %s: %w", klog.KObj(obj), err)
}
