// Package rollback is the Rollback loop: it installs an older version of an AppType's package in place of the
// installed one, through the same hand-over as an upgrade (the Upgrade loop adopts the objects, which keep their
// UIDs; the GC loop collects the version rolled back from), when the version that took over in an upgrade stops
// being available (spec.rollback: Automatic) or the spec asks for an older version (a downgrade by
// spec.approvedVersion or spec.versionRange). A rollback whose CRDs would drop a stored version or invalidate
// existing objects is refused. It writes the AppType's status.rolledBack and condition RolledBack, and runs in the
// catalog group of loops (it resolves the older version from the catalogs).
package rollback

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/internal/fieldindex"
	"github.com/almproject/alm/controllers/internal/versions"
	"github.com/almproject/alm/controllers/registry"
	"github.com/almproject/alm/internal/status"
)

// Name is the loop's name (--loops, the controller and its events).
const Name = "rollback"

// Polling intervals.
const (
	// requeueRefused: a refused rollback is looked at again (objects may have been migrated, a catalog changed).
	requeueRefused = time.Minute
	// requeueNameTaken: the version to install again still exists under its name (being collected).
	requeueNameTaken = 2 * time.Second
)

// Reconciler rolls AppTypes back.
type Reconciler struct {
	client.Client
	// Reader reads custom resources for the CRD safety check, without a cache.
	Reader   client.Reader
	Registry *registry.Registry
	Recorder events.EventRecorder
	// Namespace is ALM's own namespace.
	Namespace string
	// VersionFinalizers are the finalizers the OperatorVersions it creates carry from the start (loops.Options).
	VersionFinalizers []string
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

// Reconcile decides whether one AppType rolls back, starts the rollback, and reports.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	at := &operatorsv1alpha1.AppType{}
	if err := r.Get(ctx, req.NamespacedName, at); err != nil || !at.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	all, err := versions.OfPackage(ctx, r, at.Namespace, at.Spec.Package)
	if err != nil {
		return ctrl.Result{}, err
	}
	installed := versions.Installed(all)
	d, refused, err := r.decide(ctx, at, installed, all)
	if err != nil {
		return ctrl.Result{}, err
	}
	result := ctrl.Result{RequeueAfter: d.RequeueAfter}
	if d.RollBack {
		created, why, err := r.start(ctx, at, d, all)
		switch {
		case err != nil:
			return ctrl.Result{}, err
		case why != "":
			refused, result.RequeueAfter = why, requeueRefused
		case created == nil:
			result.RequeueAfter = requeueNameTaken
		default:
			installed = created // the status reports the rollback now, not when its creation comes back
		}
	} else if refused != "" {
		result.RequeueAfter = requeueRefused
	}
	st := at.Status.DeepCopy()
	Record(st, at, installed, refused)
	orig := at.DeepCopy()
	at.Status = *st
	return result, status.Patch(ctx, r, orig, at)
}

// decide is the automatic rollback decision, else the downgrade decision (which reads the catalog). refused says
// why a downgrade the spec asks for cannot be done.
func (r *Reconciler) decide(ctx context.Context, at *operatorsv1alpha1.AppType, installed *operatorsv1alpha1.OperatorVersion,
	all []operatorsv1alpha1.OperatorVersion) (Decision, string, error) {
	if d := Automatic(at, installed, all, r.now()); d.RollBack || d.RequeueAfter > 0 {
		return d, "", nil
	}
	if !AsksOlder(at, installed) {
		return Decision{}, "", nil
	}
	_, bundles, err := r.channelBundles(at)
	if err != nil {
		ctrl.LoggerFrom(ctx).V(1).Info("no catalog to downgrade from", "error", err.Error())
		return Decision{}, "", nil // the AppType loop reports resolution problems
	}
	d := Downgrade(at, installed, all, versionsOf(bundles))
	return d, d.Refused, nil
}

// start creates the OperatorVersion that installs d's target again, unless its CRDs are unsafe (why says so) or a
// version of that name still exists (created is nil: it is being collected; look again soon).
func (r *Reconciler) start(ctx context.Context, at *operatorsv1alpha1.AppType, d Decision, all []operatorsv1alpha1.OperatorVersion) (
	created *operatorsv1alpha1.OperatorVersion, why string, err error) {
	res, bundles, err := r.channelBundles(at)
	if err != nil {
		return nil, fmt.Sprintf("rolling %s back: %v", d.From.Name, err), nil
	}
	ov, err := rollbackVersion(at, res, bundles, d)
	if err != nil {
		return nil, fmt.Sprintf("rolling %s back: %v", d.From.Name, err), nil
	}
	for i := range all {
		if all[i].Name == ov.Name {
			return nil, "", nil
		}
	}
	if err := r.checkCRDs(ctx, ov); err != nil {
		var unsafe *unsafeError
		if !errors.As(err, &unsafe) {
			return nil, "", err
		}
		why = fmt.Sprintf("rolling %s back to %s is refused: %v", d.From.Name, ov.Name, unsafe.error)
		r.Recorder.Eventf(at, d.From, corev1.EventTypeWarning, operatorsv1alpha1.ReasonRollbackRefused, "Rollback", "%s", truncate(why, 1000))
		return nil, why, nil
	}
	if err := versions.Create(ctx, r.Client, at, ov, r.VersionFinalizers); err != nil {
		return nil, "", err
	}
	ctrl.LoggerFrom(ctx).Info("Rolling back", "appType", klog.KObj(at), "from", d.From.Name, "to", ov.Name, "reason", d.Reason)
	r.Recorder.Eventf(at, ov, corev1.EventTypeWarning, "RollingBack", "Rollback", "Rolling %s back to %s: %s", d.From.Name, ov.Name, truncate(d.Reason, 800))
	return ov, "", nil
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// SetupWithManager registers the loop: AppTypes, their OperatorVersions, and catalog changes.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := fieldindex.Register(context.Background(), mgr.GetCache()); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).Named(Name).
		For(&operatorsv1alpha1.AppType{}).
		Watches(&operatorsv1alpha1.OperatorVersion{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
			return registry.AppTypeRequests(ctx, r, obj.GetNamespace(), obj.(*operatorsv1alpha1.OperatorVersion).Spec.PackageName)
		})).
		Watches(&operatorsv1alpha1.CatalogSource{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
			return registry.AppTypeRequests(ctx, r, registry.Serves(obj.GetNamespace(), r.Namespace), "")
		}), registry.CatalogChanged()).
		Complete(r)
}
