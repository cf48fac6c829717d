// Package gc is the OperatorVersion GC loop: an OperatorVersion that owns nothing any more (label query) and that
// a Succeeded OperatorVersion replaces is deleted. It also runs the cleanup finalizer of deleted OperatorVersions:
// their cluster-scoped objects, which Kubernetes garbage collection cannot tie to a namespaced owner, are removed
// (CRDs are only released, never deleted).
package gc

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/internal/installer"
	"github.com/almproject/alm/controllers/internal/ownership"
	"github.com/almproject/alm/controllers/internal/versions"
)

// Reconciler deletes replaced OperatorVersions that own nothing.
type Reconciler struct {
	client.Client
	// Objects is the cache of ALM's objects' metadata (installer.Objects), where GC looks first; "owns nothing" is
	// confirmed by Reader, which reads without the cache, so it is never a stale answer.
	Objects  client.Reader
	Reader   client.Reader
	Recorder events.EventRecorder
	// lastDeletion is when finalize last deleted objects of a version, by version.
	lastDeletion sync.Map
}

// New returns the GC loop for mgr.
func New(mgr ctrl.Manager) *Reconciler {
	return &Reconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("gc")}
}

// Reconcile collects one OperatorVersion if it is replaced and owns nothing.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ov := &operatorsv1alpha1.OperatorVersion{}
	if err := r.Get(ctx, req.NamespacedName, ov); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !ov.DeletionTimestamp.IsZero() {
		requeue, err := r.finalize(ctx, ov)
		return ctrl.Result{RequeueAfter: requeue}, err
	}
	all, err := versions.OfPackage(ctx, r, ov.Namespace, ov.Spec.PackageName)
	if err != nil {
		return ctrl.Result{}, err
	}
	// Replaced: a version names it in replaces/skips/skipRange, or adopted it through a chain of versions
	// (fail forward: v3 replaces a failed v2 that replaced v1) and recorded that in status.replacedBy.
	candidates := versions.Successors(ov, all)
	for i := range all {
		if all[i].Name == ov.Status.ReplacedBy {
			candidates = append(candidates, &all[i])
		}
	}
	replacedBy := succeeded(candidates)
	if replacedBy == nil {
		return ctrl.Result{}, nil
	}
	owned, err := r.owned(ctx, ov, nil)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !Collectable(ov, replacedBy, len(owned)) {
		return ctrl.Result{RequeueAfter: requeueWhileAdopting}, nil
	}
	r.Recorder.Eventf(ov, replacedBy, corev1.EventTypeNormal, "Deleting", "Delete", "Replaced by %s and owns nothing", replacedBy.Name)
	return ctrl.Result{}, client.IgnoreNotFound(r.Delete(ctx, ov))
}

// requeueWhileAdopting: the Upgrade loop is still handing objects over.
const requeueWhileAdopting = 5 * time.Second

// Collectable is the GC decision: ov is replaced by a Succeeded version and owns nothing.
func Collectable(ov, replacedBy *operatorsv1alpha1.OperatorVersion, owned int) bool {
	return replacedBy != nil && replacedBy.Status.Phase == operatorsv1alpha1.PhaseSucceeded && owned == 0 && ov.DeletionTimestamp.IsZero()
}

func succeeded(candidates []*operatorsv1alpha1.OperatorVersion) *operatorsv1alpha1.OperatorVersion {
	for _, c := range candidates {
		if c.Status.Phase == operatorsv1alpha1.PhaseSucceeded {
			return c
		}
	}
	return nil
}

// cleanupSettle is how long a deleted OperatorVersion waits after removing objects before it checks again that
// nothing is left: an install step that read the version just before its deletion may still apply an object.
const cleanupSettle = time.Second

// finalize removes a deleted OperatorVersion's cluster-scoped objects; once a pass at least cleanupSettle after the
// last one that deleted something finds none left (the API server confirms it), it removes the finalizer. It returns
// when to look again. Namespaced objects are left to Kubernetes garbage collection through their ownerReferences.
func (r *Reconciler) finalize(ctx context.Context, ov *operatorsv1alpha1.OperatorVersion) (time.Duration, error) {
	key := client.ObjectKeyFromObject(ov)
	if !controllerutil.ContainsFinalizer(ov, installer.Finalizer) {
		r.lastDeletion.Delete(key)
		return 0, nil
	}
	owned, err := r.owned(ctx, ov, clusterScoped)
	if err != nil {
		return 0, err
	}
	deleted := 0
	for _, meta := range owned {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(meta.GroupVersionKind())
		obj.SetName(meta.Name)
		if meta.Kind == "CustomResourceDefinition" {
			if err := r.Reader.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				if client.IgnoreNotFound(err) == nil {
					continue
				}
				return 0, err
			}
			ownership.Release(obj, ov)
			if err := r.Update(ctx, obj); err != nil {
				return 0, fmt.Errorf("releasing CRD %s: %w", meta.Name, err)
			}
			continue
		}
		if err := r.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return 0, fmt.Errorf("deleting %s %s of %s: %w", meta.Kind, meta.Name, ov.Name, err)
		}
		deleted++
	}
	if deleted > 0 {
		r.lastDeletion.Store(key, time.Now())
		return cleanupSettle, nil
	}
	// Other events (a CRD released above) bring the version back sooner than cleanupSettle: wait for it anyway.
	if last, ok := r.lastDeletion.Load(key); ok {
		if wait := cleanupSettle - time.Since(last.(time.Time)); wait > 0 {
			return wait, nil
		}
	}
	patch := client.MergeFrom(ov.DeepCopy())
	controllerutil.RemoveFinalizer(ov, installer.Finalizer)
	if err := r.Patch(ctx, ov, patch); client.IgnoreNotFound(err) != nil {
		return 0, err
	}
	r.lastDeletion.Delete(key)
	return 0, nil
}

// owned lists what ov owns (only what keep accepts, unless keep is nil): from the cache when it finds something,
// else from the API server, so that nothing is collected or released on a stale answer and the common case (still
// owning, while the Upgrade loop hands over) costs no request.
func (r *Reconciler) owned(ctx context.Context, ov *operatorsv1alpha1.OperatorVersion, keep func(metav1.PartialObjectMetadata) bool) ([]metav1.PartialObjectMetadata, error) {
	if r.Objects != nil {
		owned, err := ownership.Owned(ctx, r.Objects, r.RESTMapper(), ov)
		if owned = filter(owned, keep); err != nil || len(owned) > 0 {
			return owned, err
		}
	}
	owned, err := ownership.Owned(ctx, r.Reader, r.RESTMapper(), ov)
	return filter(owned, keep), err
}

func clusterScoped(meta metav1.PartialObjectMetadata) bool { return meta.Namespace == "" }

func filter(objects []metav1.PartialObjectMetadata, keep func(metav1.PartialObjectMetadata) bool) []metav1.PartialObjectMetadata {
	if keep == nil {
		return objects
	}
	out := objects[:0]
	for _, o := range objects {
		if keep(o) {
			out = append(out, o)
		}
	}
	return out
}

// SetupWithManager registers the loop. Any change to a version of the package may make another collectable.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	objects, err := installer.Objects(mgr)
	if err != nil {
		return err
	}
	r.Objects = objects
	b := ctrl.NewControllerManagedBy(mgr).Named("gc").For(&operatorsv1alpha1.OperatorVersion{})
	return installer.Watch(b, mgr.GetClient()).Complete(r)
}
