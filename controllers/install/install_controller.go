// Package install is the OperatorVersion Install loop: a new OperatorVersion with no older version installed
// has its requirements checked and its install strategy applied, and reports Pending -> InstallReady ->
// Installing -> Succeeded, or Failed with the reason.
package install

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/internal/bundlecontent"
	"github.com/almproject/alm/controllers/internal/fieldindex"
	"github.com/almproject/alm/controllers/internal/installer"
	"github.com/almproject/alm/controllers/internal/versions"
	"github.com/almproject/alm/internal/outage"
)

// Reconciler installs OperatorVersions that replace nothing installed.
type Reconciler struct {
	client.Client
	Installer *installer.Installer
}

// DefaultTimeout is how long an install may take before the OperatorVersion is Failed.
const DefaultTimeout = installer.DefaultTimeout

// New returns the Install loop for mgr; timeout bounds Pending and Installing. bundles verifies bundle content and
// pulls bundle images (shared with the Upgrade loop); nil verifies content in spec only.
func New(mgr ctrl.Manager, timeout time.Duration, bundles *bundlecontent.Source) *Reconciler {
	return &Reconciler{Client: mgr.GetClient(), Installer: installer.New(mgr, "install", timeout, bundles)}
}

// Reconcile installs one OperatorVersion by one phase.
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
	if len(versions.Successors(ov, all)) > 0 || len(versions.Predecessors(ov, all)) > 0 {
		return ctrl.Result{}, nil // a newer version is taking over, or this one upgrades another: the Upgrade loop's
	}
	res, err := r.Installer.Step(ctx, ov)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.Installer.WriteStatus(ctx, ov, res.Status); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: res.RequeueAfter}, res.Terminal
}

// SetupWithManager registers the loop.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := fieldindex.Register(context.Background(), mgr.GetCache()); err != nil {
		return err
	}
	if err := r.Installer.UseObjectCache(mgr); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).Named("install").WithOptions(outage.Controller()).For(&operatorsv1alpha1.OperatorVersion{})
	return installer.Watch(b, mgr.GetClient()).Complete(r)
}
