// Package status writes an object's status the one way every loop (ALM's and the Konnect operator's) does: once at
// the end of a reconcile, only if it changed, and only over the version the loop read.
package status

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Patch writes obj's status as one merge patch from orig's status, the copy the loop read, to obj's. Nothing is sent
// when the two statuses are equal. Only the status is compared and sent: the status subresource ignores every other
// field, and an object's spec (an OperatorVersion's whole install strategy) would be most of the cost otherwise.
// The patch carries orig's resourceVersion (optimistic concurrency), so a status computed from a stale copy never
// overwrites a newer one: the API server refuses it with a conflict, which Patch drops, because the newer
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
	var p client.Patch
	if before, after := statusOf(orig), statusOf(obj); before != nil && after != nil {
		if equality.Semantic.DeepEqual(before, after) {
			return false, nil
		}
		data, err := statusPatch(orig.GetResourceVersion(), before, after)
		if err != nil {
			return false, fmt.Errorf("writing the status of %s: %w", klog.KObj(obj), err)
		}
		p = client.RawPatch(types.MergePatchType, data)
	} else {
		if equality.Semantic.DeepEqual(orig, obj) {
			return false, nil
		}
		p = client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})
	}
	err = c.Status().Patch(ctx, obj, p)
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

// statusOf is the address of obj's status (its struct field serialized as "status"), or nil for an object without
// one (unstructured, for instance).
func statusOf(obj client.Object) any {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	field, ok := v.Elem().Type().FieldByName("Status")
	if name, _, _ := strings.Cut(field.Tag.Get("json"), ","); !ok || name != "status" || field.Type.Kind() != reflect.Struct {
		return nil
	}
	return v.Elem().FieldByIndex(field.Index).Addr().Interface()
}

// statusPatch is the merge patch from status before to after, with the resourceVersion the loop read
// (optimistic concurrency).
func statusPatch(resourceVersion string, before, after any) ([]byte, error) {
	from, err := json.Marshal(before)
	if err != nil {
		return nil, err
	}
	to, err := json.Marshal(after)
	if err != nil {
		return nil, err
	}
	diff, err := jsonpatch.CreateMergePatch(from, to)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"metadata": map[string]string{"resourceVersion": resourceVersion}, "status": json.RawMessage(diff)})
}
