// Package upgradetrigger is the seed's Catalog loop: when a catalog offers a version whose replaces (or skips, or
// skipRange) names an installed OperatorVersion, that version is created in the namespace, and the Upgrade loop
// takes it from there. Catalog changes re-trigger it. With approval: Manual, the version is created only once the
// AppType's spec.approvedVersion names it. A package whose CatalogSource rolls it out in waves (spec.rollout) is
// the waves loop's. It runs in the catalog group of loops.
package upgradetrigger

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/index"
	"github.com/almproject/alm/controllers/internal/fieldindex"
	"github.com/almproject/alm/controllers/internal/versions"
	"github.com/almproject/alm/controllers/registry"
	"github.com/almproject/alm/internal/outage"
)

// Name is the loop's name (--loops, the controller and its events).
const Name = "upgradetrigger"

// Reconciler creates the next version of installed operators.
type Reconciler struct {
	client.Client
	Registry *registry.Registry
	Recorder events.EventRecorder
	// Namespace is ALM's own namespace.
	Namespace string
	// VersionFinalizers are the finalizers the OperatorVersions it creates carry from the start (loops.Options).
	VersionFinalizers []string
}

// Reconcile looks for a successor of one installed OperatorVersion.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ov, all, err := versions.GetActive(ctx, r, req.NamespacedName)
	if ov == nil {
		return ctrl.Result{}, err
	}
	if installed := versions.Installed(all); installed == nil || installed.Name != ov.Name {
		return ctrl.Result{}, nil // a newer version is installed; it is the one to upgrade from
	}
	at, err := registry.AppTypeFor(ctx, r, ov)
	if err != nil || at == nil {
		return ctrl.Result{}, err // no AppType declares this package here: nothing says which channel to follow
	}
	request, err := r.Registry.Request(at, r.Namespace)
	if err != nil {
		return ctrl.Result{}, nil //nolint:nilerr // no catalog to resolve from: the AppType loop reports it
	}
	request.From, request.FromName = ov.Spec.Version.String(), ov.Name
	ix := r.Registry.Index()
	res, err := ix.Resolve(request)
	if err != nil || res.Chosen == nil || res.Chosen.Name == ov.Name {
		return ctrl.Result{}, nil //nolint:nilerr // nothing newer; the AppType loop reports resolution problems
	}
	if governed, err := r.rolledOut(ctx, res.Chosen.Catalog, at.Spec.Package); err != nil || governed {
		return ctrl.Result{}, err // the waves loop upgrades it when its wave comes
	}
	next, err := NextHop(ix, res, ov.Namespace)
	if err != nil {
		return ctrl.Result{}, err
	}
	next.Spec.Source = registry.Reference(res.Chosen.Catalog)
	if !Approved(at, res.Chosen.Version.String()) {
		return ctrl.Result{}, nil // the AppType shows the upgrade awaiting approval
	}
	for _, existing := range all {
		if existing.Name == next.Name {
			return ctrl.Result{}, nil
		}
	}
	if err := versions.Create(ctx, r.Client, at, next, r.VersionFinalizers); err != nil {
		return ctrl.Result{}, err
	}
	r.Recorder.Eventf(at, next, corev1.EventTypeNormal, "Upgrading", "Upgrade", "Upgrading %s to %s %s", ov.Name, next.Name, next.Spec.Version)
	return ctrl.Result{}, nil
}

// rolledOut says whether the CatalogSource catalog (namespace/name) rolls pkg out in waves (spec.rollout): then
// the waves loop creates its new versions.
func (r *Reconciler) rolledOut(ctx context.Context, catalog, pkg string) (bool, error) {
	ref := registry.Reference(catalog)
	if ref == nil {
		return false, nil
	}
	cs := &operatorsv1alpha1.CatalogSource{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, cs); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return cs.Spec.Rollout.Covers(pkg), nil
}

// Approved says whether at allows upgrading to version: always with Automatic approval, with Manual only when
// spec.approvedVersion names it (or a later version on the way).
func Approved(at *operatorsv1alpha1.AppType, version string) bool {
	return at.Spec.Approval != operatorsv1alpha1.ApprovalManual || at.Spec.ApprovedVersion == version
}

// NextHop is the OperatorVersion to create next on the way to the chosen bundle: the first bundle on the upgrade
// path after the installed one, so that it names the installed version in replaces, skips or skipRange and the
// Upgrade loop can hand the installed version's objects over to it.
func NextHop(ix *index.Index, res index.Result, namespace string) (*operatorsv1alpha1.OperatorVersion, error) {
	if len(res.Path) <= 2 {
		return res.OperatorVersion(namespace)
	}
	name := res.Path[1]
	for _, p := range ix.Package(res.Request.Package) {
		if p.Catalog != res.Chosen.Catalog {
			continue
		}
		ch := p.Channel(res.Channel)
		if ch == nil {
			break
		}
		if e := ch.Entry(name); e != nil {
			hop := res
			hop.Chosen = &index.Candidate{Name: e.Bundle.Name, Version: e.Bundle.Version, Catalog: p.Catalog, Bundle: e.Bundle, Entry: e}
			return hop.OperatorVersion(namespace)
		}
	}
	return nil, fmt.Errorf("upgrade path %v: bundle %s not found on channel %s of catalog %s", res.Path, name, res.Channel, res.Chosen.Catalog)
}

// SetupWithManager registers the loop: OperatorVersions, AppType approval changes and catalog changes.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := fieldindex.Register(context.Background(), mgr.GetCache()); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).Named(Name).WithOptions(outage.Controller()).
		For(&operatorsv1alpha1.OperatorVersion{}).
		Watches(&operatorsv1alpha1.AppType{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
			return r.versions(ctx, obj.GetNamespace(), obj.(*operatorsv1alpha1.AppType).Spec.Package)
		})).
		Watches(&operatorsv1alpha1.CatalogSource{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
			return r.versions(ctx, registry.Serves(obj.GetNamespace(), r.Namespace), "")
		}), registry.CatalogChanged()).
		Complete(r)
}

func (r *Reconciler) versions(ctx context.Context, namespace, pkg string) []reconcile.Request {
	return fieldindex.Requests(ctx, r, &operatorsv1alpha1.OperatorVersionList{}, namespace, fieldindex.OperatorVersionPackage, pkg)
}
