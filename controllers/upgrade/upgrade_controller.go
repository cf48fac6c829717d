// Package upgrade is the OperatorVersion Upgrade loop: an OperatorVersion that replaces a running one is installed
// like any other, and once it has Succeeded it adopts everything the old versions own: it becomes the controlling
// owner of the objects it also declares (updated in place, same UID), the objects only the old versions had are
// removed, and the old versions go Replacing for the GC loop.
package upgrade

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/internal/bundlecontent"
	"github.com/almproject/alm/controllers/internal/fieldindex"
	"github.com/almproject/alm/controllers/internal/installer"
	"github.com/almproject/alm/controllers/internal/ownership"
	"github.com/almproject/alm/controllers/internal/versions"
	"github.com/almproject/alm/controllers/metrics"
	"github.com/almproject/alm/internal/outage"
	"github.com/almproject/alm/internal/status"
)

// Reconciler installs replacing OperatorVersions and hands the old versions' objects over to them.
type Reconciler struct {
	client.Client
	// Objects is the cache of ALM's objects' metadata (objectcache.For): adoption finds the old versions' objects
	// there and writes them with its resourceVersion as a precondition (handOne); Reader stands in without it.
	Objects   client.Reader
	Reader    client.Reader
	Installer *installer.Installer
	Recorder  events.EventRecorder
}

// New returns the Upgrade loop for mgr; timeout bounds the new version's install. bundles verifies bundle content
// and pulls bundle images (shared with the Install loop); nil verifies content in spec only.
func New(mgr ctrl.Manager, timeout time.Duration, bundles *bundlecontent.Source) *Reconciler {
	in := installer.New(mgr, "upgrade", timeout, bundles)
	in.HandOverAnnounces = true // adopt's Adopted Event says the version succeeded
	return &Reconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Installer: in, Recorder: mgr.GetEventRecorder("upgrade")}
}

// Reconcile advances one replacing OperatorVersion.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if deleted, requeue, err := r.Installer.Finalize(ctx, req.NamespacedName); deleted || err != nil {
		r.Installer.Writes.Forget(req.NamespacedName)
		return ctrl.Result{RequeueAfter: requeue}, err
	}
	ov, all, err := versions.GetActive(ctx, r, req.NamespacedName)
	if ov == nil {
		r.Installer.Writes.Forget(req.NamespacedName)
		return ctrl.Result{}, err
	}
	if r.Installer.Stale(ov) {
		// The cache does not show this loop's last write yet: its watch event brings ov back, or, if that event
		// is lost (an API server restart), the recheck does.
		return ctrl.Result{RequeueAfter: installer.Recheck}, nil
	}
	olds := versions.Chain(ov, all)
	if len(olds) == 0 || len(versions.Successors(ov, all)) > 0 {
		return ctrl.Result{}, nil // nothing to upgrade from (the Install loop's), or a newer version took over
	}
	// The old versions keep running and keep their objects until this one has Succeeded, and its content was
	// verified in this step (a Plan): a version whose bundle cannot be verified applies nothing and adopts nothing.
	res, err := r.Installer.Step(ctx, ov)
	if err != nil {
		return ctrl.Result{}, err
	}
	if res.Status.Phase == operatorsv1alpha1.PhaseSucceeded && res.Plan != nil {
		ready, wait, err := r.handoff(ctx, ov, olds, &res.Status)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !ready {
			if err := r.Installer.WriteStatus(ctx, ov, res.Status); err != nil {
				return ctrl.Result{}, err
			}
			if res.RequeueAfter > 0 && (wait == 0 || res.RequeueAfter < wait) {
				wait = res.RequeueAfter
			}
			return ctrl.Result{RequeueAfter: wait}, nil
		}
		for _, old := range olds {
			if err := r.adopt(ctx, ov, old, olds, res.Plan); err != nil {
				return ctrl.Result{}, err
			}
		}
		recordTakeover(&res.Status, olds, time.Now())
	}
	if err := r.Installer.WriteStatus(ctx, ov, res.Status); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: res.RequeueAfter}, res.Terminal
}

// adopt hands everything old owns to ov (or removes it when ov does not declare it) and marks old Replacing. An
// object handed over loses the references of every version ov replaces (olds), not only old's.
func (r *Reconciler) adopt(ctx context.Context, ov, old *operatorsv1alpha1.OperatorVersion, olds []*operatorsv1alpha1.OperatorVersion, plan *installer.Plan) error {
	owned, err := ownership.Owned(ctx, r.objects(), r.RESTMapper(), old)
	if err != nil {
		return err
	}
	handed, removed, err := r.handAll(ctx, owned, ov, old, olds, plan)
	if err != nil {
		return err
	}
	// One Event tells that ov succeeded (the installer records no Succeeded Event of its own for it:
	// HandOverAnnounces), the hand-over and that old goes Replacing (then the GC loop deletes it): at a thousand
	// upgrades every Event is a request, and old's own status says it is Replacing.
	marked := old.Status.Phase == operatorsv1alpha1.PhaseReplacing && old.Status.ReplacedBy == ov.Name
	if handed+removed > 0 || !marked {
		r.Recorder.Eventf(ov, old, corev1.EventTypeNormal, "Adopted", "Upgrade",
			"Succeeded, every Deployment is available; took over %d objects from %s and removed %d it no longer ships", handed, old.Name, removed)
	}
	if marked {
		return nil
	}
	orig := old // read-only, as versions.OfPackage lists it: the status is written from a copy
	old = old.DeepCopy()
	old.Status.Phase, old.Status.Reason = operatorsv1alpha1.PhaseReplacing, operatorsv1alpha1.ReasonReplacing
	old.Status.Message = fmt.Sprintf("replaced by %s, which now owns its objects", ov.Name)
	old.Status.ReplacedBy = ov.Name
	apimeta.SetStatusCondition(&old.Status.Conditions, metav1.Condition{
		Type: operatorsv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: operatorsv1alpha1.ReasonReplacing,
		Message: old.Status.Message, ObservedGeneration: old.Generation,
	})
	if err := status.Patch(ctx, r, orig, old); err != nil {
		return err
	}
	metrics.HandedOver(old, orig.Status.Phase)
	return nil
}

// handParallel is how many objects one adoption hands over at once: each hand-over is one write of its own object,
// independent of the others, so an upgrade waits for a few round trips instead of one per object.
const handParallel = 4

// handAll hands every object in owned over (handOne), a few at a time, and counts those handed over and removed.
// Old is marked Replacing only after all of them succeeded (the caller); an error leaves it owning the rest.
func (r *Reconciler) handAll(ctx context.Context, owned []metav1.PartialObjectMetadata, ov, old *operatorsv1alpha1.OperatorVersion,
	olds []*operatorsv1alpha1.OperatorVersion, plan *installer.Plan) (handed, removed int, err error) {
	done := make([]int, len(owned))
	errs := make([]error, len(owned))
	slots := make(chan struct{}, handParallel)
	var wg sync.WaitGroup
	for i := range owned {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			done[i], errs[i] = r.handOne(ctx, &owned[i], ov, old, olds, plan)
		}()
	}
	wg.Wait()
	for i := range owned {
		switch done[i] {
		case handedOver:
			handed++
		case deleted:
			removed++
		}
	}
	return handed, removed, errors.Join(errs...)
}

// What handOne did with an object.
const (
	handedOver = iota + 1
	deleted
)

// handOne hands one object old owns to ov, releases it (a CRD) or deletes it (ov does not ship it). It writes
// from the cached metadata, without reading the object: the hand-over is a merge patch of its labels and
// ownerReferences and the removal a delete, each with the cached resourceVersion as a precondition, so a stale
// cache is a conflict (the reconcile is retried with fresher metadata), never a lost write.
func (r *Reconciler) handOne(ctx context.Context, meta *metav1.PartialObjectMetadata, ov, old *operatorsv1alpha1.OperatorVersion,
	olds []*operatorsv1alpha1.OperatorVersion, plan *installer.Plan) (int, error) {
	gvk := meta.GroupVersionKind()
	if !ownership.IsOwnedBy(meta, old) {
		return 0, nil
	}
	obj := meta.DeepCopy()
	patch := client.MergeFromWithOptions(meta.DeepCopy(), client.MergeFromWithOptimisticLock{})
	what := 0
	switch {
	case plan.Declares(gvk, meta.Namespace, meta.Name):
		ownership.HandOver(obj, ov, olds...)
		what = handedOver
	case gvk.Kind == "CustomResourceDefinition":
		ownership.Release(obj, old) // CRDs hold user data: never deleted as a side effect
		what = handedOver
	default:
		rv := meta.ResourceVersion
		err := r.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &meta.UID, ResourceVersion: &rv})
		if client.IgnoreNotFound(err) != nil {
			return 0, fmt.Errorf("removing %s %s that %s no longer ships: %w", gvk.Kind, meta.Name, ov.Name, err)
		}
		ctrl.LoggerFrom(ctx).V(1).Info("Removed", "kind", gvk.Kind, "name", meta.Name, "from", old.Name)
		return deleted, nil
	}
	if err := r.Patch(ctx, obj, patch); client.IgnoreNotFound(err) != nil {
		return 0, fmt.Errorf("handing %s %s over from %s to %s: %w", gvk.Kind, meta.Name, old.Name, ov.Name, err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Adopted", "kind", gvk.Kind, "name", meta.Name, "from", old.Name, "to", ov.Name)
	return what, nil
}

func (r *Reconciler) objects() client.Reader {
	if r.Objects != nil {
		return r.Objects
	}
	return r.Reader
}

// SetupWithManager registers the loop.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := fieldindex.Register(context.Background(), mgr.GetCache()); err != nil {
		return err
	}
	if err := r.Installer.UseObjectCache(mgr); err != nil {
		return err
	}
	r.Objects = r.Installer.Objects
	b := ctrl.NewControllerManagedBy(mgr).Named("upgrade").WithOptions(outage.Controller()).For(&operatorsv1alpha1.OperatorVersion{})
	return installer.Watch(b, mgr.GetClient()).Complete(r)
}
