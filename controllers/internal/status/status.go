// Package status writes an object's status the one way every loop (ALM's and the Konnect operator's) does: once at
// the end of a reconcile, only if it changed, and only over the version the loop read.
package status

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Patch writes obj's status as one merge patch from orig, the copy the loop read, to obj. Nothing is sent when they
// are equal. The patch carries orig's resourceVersion (optimistic concurrency), so a status computed from a stale
// copy never overwrites a newer one: the API server refuses it with a conflict, which Patch drops, because the newer
// version's watch event brings the object back to its loop, which then works from a fresh copy. A deleted object
// needs no status either.
func Patch(ctx context.Context, c client.Client, orig, obj client.Object) error {
	if equality.Semantic.DeepEqual(orig, obj) {
		return nil
	}
	err := c.Status().Patch(ctx, obj, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	switch {
	case err == nil:
		return nil
	case apierrors.IsConflict(err):
		ctrl.LoggerFrom(ctx).V(1).Info("status not written: the object changed since it was read; it is reconciled again",
			"object", klog.KObj(obj))
		return nil
	case apierrors.IsNotFound(err):
		return nil
	}
	return fmt.Errorf("writing the status of %s: %w", klog.KObj(obj), err)
}
