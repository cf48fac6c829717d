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

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
		return true, 0, client.IgnoreNotFound(err)
	}
	if ov.DeletionTimestamp.IsZero() {
		return false, 0, nil
	}
	if !controllerutil.ContainsFinalizer(ov, Finalizer) {
		c.lastDeletion.Delete(key)
		return true, 0, nil
	}
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
	return true, 0, nil
}

// clusterScoped lists the cluster-scoped objects ov owns: from the cache when it finds some, else from the API
// server, so that nothing is left behind on a stale answer.
func (c *Cleaner) clusterScoped(ctx context.Context, ov *operatorsv1alpha1.OperatorVersion) ([]metav1.PartialObjectMetadata, error) {
	if c.Objects != nil {
		owned, err := ownership.OwnedClusterScoped(ctx, c.Objects, c.Mapper, ov)
		if err != nil || len(owned) > 0 {
			return owned, err
		}
	}
	return ownership.OwnedClusterScoped(ctx, c.Reader, c.Mapper, ov)
}
