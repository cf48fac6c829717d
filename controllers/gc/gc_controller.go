// Package gc is the OperatorVersion GC loop: an OperatorVersion that owns nothing any more (label query) and that
// a Succeeded OperatorVersion replaces is deleted. The cleanup finalizer of deleted OperatorVersions (their
// cluster-scoped objects) is run by the loops that add it, Install and Upgrade (package cleanup).
package gc

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/internal/fieldindex"
	"github.com/almproject/alm/controllers/internal/installer"
	"github.com/almproject/alm/controllers/internal/objectcache"
	"github.com/almproject/alm/controllers/internal/ownership"
	"github.com/almproject/alm/controllers/internal/versions"
	"github.com/almproject/alm/internal/outage"
)

// Reconciler deletes replaced OperatorVersions that own nothing.
type Reconciler struct {
	client.Client
	// Objects is the cache of ALM's objects' metadata (objectcache.For), where GC looks first; "owns nothing" is
	// confirmed by Reader, which reads without the cache, unless the Upgrade loop handed everything over (owned).
	Objects  client.Reader
	Reader   client.Reader
	Recorder events.EventRecorder
	// deleted remembers, by key, the UID of each version this loop deleted until its cache shows the deletion, so
	// that a reconcile of the stale copy does not ask the API server and delete again.
	deleted sync.Map
}

// New returns the GC loop for mgr.
func New(mgr ctrl.Manager) *Reconciler {
	return &Reconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("gc")}
}

// Reconcile collects one OperatorVersion if it is replaced and owns nothing.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ov := &operatorsv1alpha1.OperatorVersion{}
	if err := r.Get(ctx, req.NamespacedName, ov); err != nil {
		r.deleted.Delete(req.NamespacedName)
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !ov.DeletionTimestamp.IsZero() {
		r.deleted.Delete(req.NamespacedName)
		return ctrl.Result{}, nil // going already; its finalizer is the installing loops'
	}
	if uid, ok := r.deleted.Load(req.NamespacedName); ok && uid == ov.UID {
		return ctrl.Result{}, nil // deleted by this loop; the cache does not show it yet
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
		return ctrl.Result{RequeueAfter: recheck(ov)}, nil
	}
	owned, err := r.owned(ctx, ov, replacedBy)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !Collectable(ov, replacedBy, len(owned)) {
		return ctrl.Result{RequeueAfter: requeueWhileAdopting}, nil
	}
	if ov.Status.ReplacedBy == "" {
		// A version the Upgrade loop marked Replacing was announced by its Adopted Event; another gets one here.
		r.Recorder.Eventf(ov, replacedBy, corev1.EventTypeNormal, "Deleting", "Delete", "Replaced by %s and owns nothing", replacedBy.Name)
	}
	if err := r.Delete(ctx, ov, client.Preconditions{UID: &ov.UID}); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, err
	}
	r.deleted.Store(req.NamespacedName, ov.UID)
	return ctrl.Result{}, nil
}

// requeueWhileAdopting: the Upgrade loop is still handing objects over.
const requeueWhileAdopting = 5 * time.Second

// recheck is when a version that is not collectable yet is looked at again although no watch event may come: a
// Replacing one (its replacement's Succeeded status is not in the cache yet) after installer.Recheck; any other
// waits for the events of its package's versions.
func recheck(ov *operatorsv1alpha1.OperatorVersion) time.Duration {
	if ov.Status.Phase == operatorsv1alpha1.PhaseReplacing {
		return installer.Recheck
	}
	return 0
}

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

// owned lists what ov owns: from the cache when it finds something, else from the API server, so that nothing is
// collected on a stale answer and the common case (still owning, while the Upgrade loop hands over) costs no request.
// The API server is asked about the kinds ov can own only (installer.OwnableKinds: those of its plan and its
// inventory), one list each, not about every kind ALM installs.
//
// A version the Upgrade loop marked Replacing for replacedBy (status.replacedBy) is not asked about: that loop
// found what it owned in the same cache and handed all of it over or removed it before marking it, and no loop
// gives a replaced version objects (Install and Upgrade stop at a version with a successor). An empty cache answer
// then only confirms the hand-over; at a thousand upgrades the confirmation would be a list per kind per upgrade
// (BenchmarkScale: 7 of 34 requests per upgrade).
func (r *Reconciler) owned(ctx context.Context, ov, replacedBy *operatorsv1alpha1.OperatorVersion) ([]metav1.PartialObjectMetadata, error) {
	if r.Objects != nil {
		owned, err := ownership.Owned(ctx, r.Objects, r.RESTMapper(), ov)
		if err != nil || len(owned) > 0 || handedOver(ov, replacedBy) {
			return owned, err
		}
	}
	return ownership.OwnedOf(ctx, r.Reader, r.RESTMapper(), ov, installer.OwnableKinds(ov))
}

// handedOver says whether the Upgrade loop handed ov's objects over to replacedBy and marked it Replacing.
func handedOver(ov, replacedBy *operatorsv1alpha1.OperatorVersion) bool {
	return ov.Status.Phase == operatorsv1alpha1.PhaseReplacing && ov.Status.ReplacedBy == replacedBy.Name
}

// SetupWithManager registers the loop. Any change to a version of the package may make another collectable. It
// also watches what the installing loops watch: the update of a Deployment handed over (its old state named the
// old version) brings the old version back as soon as the cache shows the hand-over, instead of after
// requeueWhileAdopting (BenchmarkScale with versions only: hundreds of versions Replacing waited at once).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := fieldindex.Register(context.Background(), mgr.GetCache()); err != nil {
		return err
	}
	objects, err := objectcache.For(mgr)
	if err != nil {
		return err
	}
	r.Objects = objects
	b := ctrl.NewControllerManagedBy(mgr).Named("gc").WithOptions(outage.Controller()).For(&operatorsv1alpha1.OperatorVersion{})
	return installer.Watch(b, mgr.GetClient()).Complete(r)
}
