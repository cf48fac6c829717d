// Package gc is the OperatorVersion GC loop: an OperatorVersion that owns nothing any more (label query) and that
// a Succeeded OperatorVersion replaces is deleted. It also runs the cleanup finalizer of deleted OperatorVersions:
// their cluster-scoped objects, which Kubernetes garbage collection cannot tie to a namespaced owner, are removed
// (CRDs are only released, never deleted).
package gc

import (
	"context"
	"fmt"
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
	// Reader reads without the cache, so "owns nothing" is never a stale answer.
	Reader   client.Reader
	Recorder events.EventRecorder
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
		deleted, err := r.finalize(ctx, ov)
		if deleted > 0 && err == nil {
			return ctrl.Result{RequeueAfter: cleanupSettle}, nil
		}
		return ctrl.Result{}, err
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
	owned, err := ownership.Owned(ctx, r.Reader, r.RESTMapper(), ov)
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

// finalize removes a deleted OperatorVersion's cluster-scoped objects; once a pass finds none left, it removes the
// finalizer. It returns how many objects this pass deleted (then the caller checks again after cleanupSettle).
// Namespaced objects are left to Kubernetes garbage collection through their ownerReferences.
func (r *Reconciler) finalize(ctx context.Context, ov *operatorsv1alpha1.OperatorVersion) (int, error) {
	if !controllerutil.ContainsFinalizer(ov, installer.Finalizer) {
		return 0, nil
	}
	owned, err := ownership.Owned(ctx, r.Reader, r.RESTMapper(), ov)
	if err != nil {
		return 0, err
	}
	deleted := 0
	for _, meta := range owned {
		if meta.Namespace != "" {
			continue
		}
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
		return deleted, nil
	}
	patch := client.MergeFrom(ov.DeepCopy())
	controllerutil.RemoveFinalizer(ov, installer.Finalizer)
	return 0, client.IgnoreNotFound(r.Patch(ctx, ov, patch))
}

// SetupWithManager registers the loop. Any change to a version of the package may make another collectable.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).Named("gc").For(&operatorsv1alpha1.OperatorVersion{})
	return installer.Watch(b, mgr.GetClient()).Complete(r)
}
