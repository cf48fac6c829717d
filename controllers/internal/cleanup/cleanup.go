// Package cleanup owns the OperatorVersion cleanup finalizer, whole: the Install and Upgrade loops, which create an
// OperatorVersion's cluster-scoped objects, add it before their first write and remove it once those objects are
// gone. Kubernetes garbage collection cannot tie a cluster-scoped object to a namespaced owner, so a deleted
// OperatorVersion's ClusterRoles, ClusterRoleBindings, PriorityClasses ... are deleted here (CRDs are only released,
// never deleted); namespaced objects go through their ownerReferences. A loop that adds the finalizer also removes
// it, so no selection of loops (--loops) can leave a deleted OperatorVersion stuck.
package cleanup

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/internal/ownership"
)

// Finalizer lets ALM delete an OperatorVersion's cluster-scoped objects before the OperatorVersion goes.
const Finalizer = "operators.alm.dev/cleanup"

// Settle is how long a deleted OperatorVersion waits after removing objects before it checks again that nothing is
// left: an install step that read the version just before its deletion may still apply an object.
const Settle = time.Second

// Cleaner runs the finalizer of deleted OperatorVersions. One Cleaner serves every loop of a manager that installs.
type Cleaner struct {
	// Client deletes and patches; Objects (the cache of ALM's objects' metadata; nil: Reader) is looked in first,
	// and "nothing left" is confirmed by Reader, which reads without a cache.
	Client  client.Client
	Objects client.Reader
	Reader  client.Reader
	Mapper  apimeta.RESTMapper
	// Kinds are the kinds a version can own (installer.OwnableKinds), the only ones Reader is asked about; nil, or
	// nil for a version: every kind ALM installs.
	Kinds func(*operatorsv1alpha1.OperatorVersion) []schema.GroupVersionKind
	// lastDeletion is when Finalize last deleted objects of a version, by version.
	lastDeletion sync.Map
}

// Finalize runs the finalizer of OperatorVersion key if it is being deleted, and says whether it was (the loop has
// nothing else to do with it then) and when to look again. It removes the version's cluster-scoped objects; once a
// pass at least Settle after the last one that deleted something finds none left, it removes the finalizer.
func (c *Cleaner) Finalize(ctx context.Context, key client.ObjectKey) (bool, time.Duration, error) {
	ov := &operatorsv1alpha1.OperatorVersion{}
	if err := c.Client.Get(ctx, key, ov); err != nil {
		c.lastDeletion.Delete(key)
		if apierrors.IsNotFound(err) {
			finalizing.forget(key)
		}
		return true, 0, client.IgnoreNotFound(err)
	}
	if ov.DeletionTimestamp.IsZero() {
		return false, 0, nil
	}
	if !controllerutil.ContainsFinalizer(ov, Finalizer) {
		c.lastDeletion.Delete(key)
		finalizing.forget(key)
		return true, 0, nil
	}
	if !finalizing.start(key, ov.UID) {
		return true, 0, nil // another loop runs the finalizer, or removed it and the cache does not show it yet
	}
	removed := false
	defer func() { finalizing.finish(key, ov.UID, removed) }()
	owned, err := c.clusterScoped(ctx, ov)
	if err != nil {
		return true, 0, err
	}
	deleted := 0
	for _, meta := range owned {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(meta.GroupVersionKind())
		obj.SetName(meta.Name)
		if meta.Kind == "CustomResourceDefinition" {
			if err := c.Reader.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				if client.IgnoreNotFound(err) == nil {
					continue
				}
				return true, 0, err
			}
			ownership.Release(obj, ov)
			if err := c.Client.Update(ctx, obj); err != nil {
				return true, 0, fmt.Errorf("releasing CRD %s: %w", meta.Name, err)
			}
			continue
		}
		if err := c.Client.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return true, 0, fmt.Errorf("deleting %s %s of %s: %w", meta.Kind, meta.Name, ov.Name, err)
		}
		deleted++
	}
	if deleted > 0 {
		c.lastDeletion.Store(key, time.Now())
		return true, Settle, nil
	}
	// Other events (a CRD released above) bring the version back sooner than Settle: wait for it anyway.
	if last, ok := c.lastDeletion.Load(key); ok {
		if wait := Settle - time.Since(last.(time.Time)); wait > 0 {
			return true, wait, nil
		}
	}
	patch := client.MergeFrom(ov.DeepCopy())
	controllerutil.RemoveFinalizer(ov, Finalizer)
	if err := c.Client.Patch(ctx, ov, patch); client.IgnoreNotFound(err) != nil {
		return true, 0, err
	}
	c.lastDeletion.Delete(key)
	removed = true
	return true, 0, nil
}

// clusterScoped lists the cluster-scoped objects ov owns: from the cache when it finds some, else from the API
// server, so that nothing is left behind on a stale answer (an install step that read ov just before its deletion).
func (c *Cleaner) clusterScoped(ctx context.Context, ov *operatorsv1alpha1.OperatorVersion) ([]metav1.PartialObjectMetadata, error) {
	if c.Objects != nil {
		owned, err := ownership.OwnedClusterScoped(ctx, c.Objects, c.Mapper, ov, nil)
		if err != nil || len(owned) > 0 || ov.Status.ReplacedBy != "" {
			// A replaced version (status.replacedBy) had its objects handed over or removed by the Upgrade loop,
			// which found them in the same cache, and no loop applies objects for it: nothing to confirm.
			return owned, err
		}
	}
	var kinds []schema.GroupVersionKind
	if c.Kinds != nil {
		kinds = c.Kinds(ov)
	}
	return ownership.OwnedClusterScoped(ctx, c.Reader, c.Mapper, ov, kinds)
}

// finalizing is which versions' finalizer a Cleaner is running, and which it removed, for every Cleaner of the
// process: the Install and Upgrade loops both run the finalizer of every deleted version, and without it the second
// would list and patch again, at the same time as the first or after it with a cache that still shows the
// finalizer.
var finalizing = &inProgress{running: map[types.UID]bool{}, removed: map[client.ObjectKey]types.UID{}}

type inProgress struct {
	mu      sync.Mutex
	running map[types.UID]bool
	removed map[client.ObjectKey]types.UID
}

// start says whether to run the finalizer of version key (uid) now: not while another Cleaner runs it, nor after one
// removed it.
func (p *inProgress) start(key client.ObjectKey, uid types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running[uid] || p.removed[key] == uid {
		return false
	}
	p.running[uid] = true
	return true
}

// finish ends a run that start allowed; removed: it removed the finalizer.
func (p *inProgress) finish(key client.ObjectKey, uid types.UID, removed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.running, uid)
	if removed {
		p.removed[key] = uid
	}
}

// forget drops what is remembered of version key: it is gone.
func (p *inProgress) forget(key client.ObjectKey) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.removed, key)
}
