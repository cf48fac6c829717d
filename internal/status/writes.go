package status

import (
	"context"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Writes remembers, per object, the resourceVersions a loop's own writes replaced, until the loop's cache shows a
// newer version. A loop whose write changes the object is triggered again by that very change, often before its
// cache has it; reconciling that stale copy would compute the same write again and send it, only to have it refused
// as a conflict. With Writes the loop skips such a reconcile: the watch event of its write brings the object back.
// The zero value is ready to use; it is safe for concurrent use.
type Writes struct {
	mu       sync.Mutex
	replaced map[types.NamespacedName][]string
}

// Wrote records that a write replaced version before of obj.
func (w *Writes) Wrote(obj client.Object, before string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.replaced == nil {
		w.replaced = map[types.NamespacedName][]string{}
	}
	key := client.ObjectKeyFromObject(obj)
	w.replaced[key] = append(w.replaced[key], before)
}

// Patch writes obj's status like the package's Patch and, when the write happened, records the version it replaced.
func (w *Writes) Patch(ctx context.Context, c client.Client, orig, obj client.Object) error {
	if err := Patch(ctx, c, orig, obj); err != nil {
		return err
	}
	if obj.GetResourceVersion() != orig.GetResourceVersion() {
		w.Wrote(obj, orig.GetResourceVersion())
	}
	return nil
}

// Stale says whether obj, as read from the cache, is a version one of the loop's own writes replaced. A newer
// version clears what was recorded.
func (w *Writes) Stale(obj client.Object) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	key := client.ObjectKeyFromObject(obj)
	replaced, ok := w.replaced[key]
	if !ok {
		return false
	}
	if slices.Contains(replaced, obj.GetResourceVersion()) {
		return true
	}
	delete(w.replaced, key)
	return false
}

// Forget drops what was recorded for the object key (it is gone).
func (w *Writes) Forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.replaced, key)
}
