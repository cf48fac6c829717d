// Package apptype is the AppType loop: a new AppType gets the newest OperatorVersion that fits its channel and
// version range created in its namespace; its status shows what is installed, the upgrade the catalog offers, and
// why each candidate was or was not chosen. An AppType whose package is not published yet installs by itself once
// it is.
package apptype

import (
	"context"
	"errors"
	"fmt"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/index"
	"github.com/almproject/alm/controllers/internal/bundlecontent"
	"github.com/almproject/alm/controllers/internal/fieldindex"
	"github.com/almproject/alm/controllers/internal/versions"
	"github.com/almproject/alm/controllers/metrics"
	"github.com/almproject/alm/controllers/registry"
	"github.com/almproject/alm/internal/outage"
	"github.com/almproject/alm/internal/status"
)

// Reconciler installs AppTypes from the catalogs in the registry.
type Reconciler struct {
	client.Client
	Registry *registry.Registry
	Recorder events.EventRecorder
	// Namespace is ALM's own namespace, whose CatalogSources serve every namespace.
	Namespace string
	// Bundles pulls the bundle images of bundles a catalog lists only by image, for the upgrade preview (nil: their
	// preview is unavailable); Reader reads the pull Secrets of their CatalogSources (default: Client).
	Bundles *bundlecontent.Source
	Reader  client.Reader
	// VersionFinalizers are the finalizers the OperatorVersions it creates carry from the start (loops.Options).
	VersionFinalizers []string
	// writes remembers the loop's own status writes, so that a cached AppType that does not show the last one yet
	// is skipped rather than written again from a stale copy.
	writes status.Writes
}

// Reconcile resolves one AppType, creates its first OperatorVersion if it has none, and reports.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	at := &operatorsv1alpha1.AppType{}
	if err := r.Get(ctx, req.NamespacedName, at); err != nil {
		r.writes.Forget(req.NamespacedName)
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !at.DeletionTimestamp.IsZero() || r.writes.Stale(at) {
		return ctrl.Result{}, nil
	}
	st := *at.Status.DeepCopy()
	st.ObservedGeneration = at.Generation

	all, err := versions.OfPackage(ctx, r, at.Namespace, at.Spec.Package)
	if err != nil {
		return ctrl.Result{}, err
	}
	installed := versions.Installed(all)
	res, err := r.resolve(at, installed)
	// First install: create the chosen version. Upgrades are the upgradetrigger loop's (the seed's Catalog loop).
	if installed == nil && err == nil && res.Chosen != nil {
		if installed, err = r.install(ctx, at, res); err != nil {
			return ctrl.Result{}, err
		}
		// The status reports the resolution from the version just created, as every later reconcile will: one
		// status write now rather than a second one when the OperatorVersion's creation comes back.
		res, err = r.resolve(at, installed)
	}
	if err == nil && firstInstallUnderWay(at, installed) {
		// The OperatorVersion's status shows the progress; the AppType's first status is written once, when its
		// first version has Succeeded or stopped (one request per install instead of two). Its creation and every
		// phase change bring the AppType back here.
		return ctrl.Result{}, nil
	}
	if err == nil && upgradeUnderWay(at, installed) {
		// The status says this upgrade is under way and the version it replaces still runs; the new version's
		// status shows the progress. Written again when it has Succeeded or stopped (two requests per upgrade
		// instead of three).
		return ctrl.Result{}, nil
	}
	resolved(&st, at, installed, res, err)
	report(&st, at, installed, res, err == nil)
	setUpgradePreview(&st, r.Registry.Index(), at.Spec.Package, installed, res, r.manifests(ctx))
	setDeprecated(&st, at, res.Deprecated, err == nil)
	if werr := r.writeStatus(ctx, at, st); werr != nil {
		return ctrl.Result{}, werr
	}
	if errors.Is(err, index.ErrInvalidRequest) {
		// The spec cannot be resolved until it changes; status.conditions say why.
		return ctrl.Result{}, reconcile.TerminalError(fmt.Errorf("AppType %s: %w", klog.KObj(at), err))
	}
	return ctrl.Result{}, nil // other resolution problems clear when a catalog changes, which re-triggers the loop
}

// install creates the OperatorVersion of the chosen bundle for at.
func (r *Reconciler) install(ctx context.Context, at *operatorsv1alpha1.AppType, res index.Result) (*operatorsv1alpha1.OperatorVersion, error) {
	ov, err := res.OperatorVersion(at.Namespace)
	if err != nil {
		return nil, fmt.Errorf("building OperatorVersion %s for %s: %w", res.Chosen.Name, klog.KObj(at), err)
	}
	ov.Spec.Source = registry.Reference(res.Chosen.Catalog)
	// No Event: the OperatorVersion's Succeeded (or Failed) Event tells how the install ended, and the AppType's
	// status which version was chosen from which catalog and why; at a thousand installs every Event is a request.
	return ov, versions.Create(ctx, r.Client, at, ov, r.VersionFinalizers)
}

// resolve resolves at's package from the catalogs, as an upgrade of installed when there is one.
func (r *Reconciler) resolve(at *operatorsv1alpha1.AppType, installed *operatorsv1alpha1.OperatorVersion) (index.Result, error) {
	request, err := r.Registry.Request(at, r.Namespace)
	if err != nil {
		return index.Result{}, err
	}
	if installed != nil {
		request.From, request.FromName = installed.Spec.Version.String(), installed.Name
	}
	return r.Registry.Index().Resolve(request)
}

// resolved fills the resolution and the Resolved condition.
func resolved(st *operatorsv1alpha1.AppTypeStatus, at *operatorsv1alpha1.AppType, installed *operatorsv1alpha1.OperatorVersion, res index.Result, err error) {
	if err != nil {
		set(st, at, operatorsv1alpha1.ConditionResolved, metav1.ConditionFalse, resolveReason(err), err.Error())
		st.Resolution = nil
		return
	}
	st.Resolution = Candidates(res)
	switch {
	case res.Chosen == nil && installed != nil:
		set(st, at, operatorsv1alpha1.ConditionResolved, metav1.ConditionTrue, operatorsv1alpha1.ReasonUpToDate,
			fmt.Sprintf("%s %s is the newest version that fits channel %s", installed.Name, installed.Spec.Version, res.Channel))
	case res.Chosen == nil:
		set(st, at, operatorsv1alpha1.ConditionResolved, metav1.ConditionFalse, operatorsv1alpha1.ReasonNoCandidate,
			fmt.Sprintf("no bundle of package %s on channel %s fits: see status.resolution", at.Spec.Package, res.Channel))
	default:
		set(st, at, operatorsv1alpha1.ConditionResolved, metav1.ConditionTrue, operatorsv1alpha1.ReasonResolved,
			fmt.Sprintf("%s %s from %s, channel %s", res.Chosen.Name, res.Chosen.Version, res.Chosen.Catalog, res.Channel))
	}
}

// report fills installed version, available upgrade and readiness.
func report(st *operatorsv1alpha1.AppTypeStatus, at *operatorsv1alpha1.AppType, installed *operatorsv1alpha1.OperatorVersion, res index.Result, resolved bool) {
	st.InstalledOperatorVersion, st.InstalledVersion, st.AvailableUpgrade = "", "", ""
	if installed == nil {
		set(st, at, operatorsv1alpha1.ConditionReady, metav1.ConditionFalse, operatorsv1alpha1.ReasonNoCandidate, "nothing installed yet")
		apimeta.RemoveStatusCondition(&st.Conditions, operatorsv1alpha1.ConditionUpgradeAvailable)
		return
	}
	st.InstalledOperatorVersion, st.InstalledVersion = installed.Name, installed.Spec.Version.String()
	if resolved && res.Chosen != nil && res.Chosen.Name != installed.Name && res.Chosen.Version.GT(installed.Spec.Version.Version) {
		st.AvailableUpgrade = res.Chosen.Version.String()
		if at.Spec.Approval == operatorsv1alpha1.ApprovalManual && at.Spec.ApprovedVersion != st.AvailableUpgrade {
			set(st, at, operatorsv1alpha1.ConditionUpgradeAvailable, metav1.ConditionTrue, operatorsv1alpha1.ReasonAwaitingApproval,
				fmt.Sprintf("%s %s is available; status.upgradePreview shows what it changes; set spec.approvedVersion: %s to upgrade",
					res.Chosen.Name, st.AvailableUpgrade, st.AvailableUpgrade))
		} else {
			set(st, at, operatorsv1alpha1.ConditionUpgradeAvailable, metav1.ConditionTrue, operatorsv1alpha1.ReasonUpgradePending,
				fmt.Sprintf("upgrading to %s %s", res.Chosen.Name, st.AvailableUpgrade))
		}
	} else {
		set(st, at, operatorsv1alpha1.ConditionUpgradeAvailable, metav1.ConditionFalse, operatorsv1alpha1.ReasonUpToDate, "no newer version on the channel")
	}
	if installed.Status.Phase == operatorsv1alpha1.PhaseSucceeded {
		set(st, at, operatorsv1alpha1.ConditionReady, metav1.ConditionTrue, operatorsv1alpha1.ReasonInstalled,
			fmt.Sprintf("%s is installed and its Deployments are available", installed.Name))
	} else {
		set(st, at, operatorsv1alpha1.ConditionReady, metav1.ConditionFalse, operatorsv1alpha1.ReasonInstalling, notReadyMessage(installed))
	}
}

// firstInstallUnderWay says whether at has never had a status written and its first version is on its way
// (created, InstallReady, Installing): nothing to report that the version's own status does not show.
func firstInstallUnderWay(at *operatorsv1alpha1.AppType, installed *operatorsv1alpha1.OperatorVersion) bool {
	if installed == nil || len(at.Status.Conditions) > 0 {
		return false
	}
	switch installed.Status.Phase {
	case "", operatorsv1alpha1.PhaseInstallReady, operatorsv1alpha1.PhaseInstalling:
		return true
	}
	return false
}

// upgradeUnderWay says whether at's status, written for its current spec, already offers the upgrade to installed
// (UpgradePending) while installed is on its way (created, InstallReady, Installing): until it has Succeeded the
// version it replaces runs and stays the one reported.
func upgradeUnderWay(at *operatorsv1alpha1.AppType, installed *operatorsv1alpha1.OperatorVersion) bool {
	if installed == nil || at.Status.ObservedGeneration != at.Generation || at.Status.InstalledOperatorVersion == installed.Name ||
		at.Status.AvailableUpgrade != installed.Spec.Version.String() {
		return false
	}
	if c := apimeta.FindStatusCondition(at.Status.Conditions, operatorsv1alpha1.ConditionUpgradeAvailable); c == nil || c.Reason != operatorsv1alpha1.ReasonUpgradePending {
		return false
	}
	switch installed.Status.Phase {
	case "", operatorsv1alpha1.PhaseInstallReady, operatorsv1alpha1.PhaseInstalling:
		return true
	}
	return false
}

// notReadyMessage says why the installed version is not ready. While it is on its way (created, InstallReady,
// Installing) the message stays the same, so that the AppType's status is not rewritten at every step of every
// install; the OperatorVersion's status has the details. A version that waits for something or failed says why.
func notReadyMessage(installed *operatorsv1alpha1.OperatorVersion) string {
	switch installed.Status.Phase {
	case "", operatorsv1alpha1.PhaseInstallReady, operatorsv1alpha1.PhaseInstalling:
		return fmt.Sprintf("%s is being installed; its status shows the progress", installed.Name)
	}
	return fmt.Sprintf("%s is %s: %s", installed.Name, installed.Status.Phase, installed.Status.Message)
}

// Candidates turns a resolution into the status form: the chosen bundle first, then the others with reasons.
func Candidates(res index.Result) []operatorsv1alpha1.Candidate {
	var out []operatorsv1alpha1.Candidate
	for _, c := range res.Candidates {
		reason := string(c.Reason)
		if c.Detail != "" {
			reason += ": " + c.Detail
		}
		cand := operatorsv1alpha1.Candidate{Name: c.Name, Version: c.Version.String(), Source: c.Catalog, Reason: reason,
			Chosen: res.Chosen != nil && c.Name == res.Chosen.Name && c.Catalog == res.Chosen.Catalog}
		if cand.Chosen {
			out = append([]operatorsv1alpha1.Candidate{cand}, out...)
		} else {
			out = append(out, cand)
		}
	}
	if len(out) > 64 {
		out = out[:64]
	}
	return out
}

func resolveReason(err error) string {
	switch {
	case errors.Is(err, index.ErrPackageNotFound):
		return operatorsv1alpha1.ReasonPackageNotFound
	case errors.Is(err, index.ErrChannelNotFound):
		return operatorsv1alpha1.ReasonChannelNotFound
	case errors.Is(err, index.ErrInvalidRequest):
		return operatorsv1alpha1.ReasonInvalidSpec
	}
	return operatorsv1alpha1.ReasonPackageNotFound // no catalog to look in
}

func set(st *operatorsv1alpha1.AppTypeStatus, at *operatorsv1alpha1.AppType, t string, s metav1.ConditionStatus, reason, msg string) {
	apimeta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg, ObservedGeneration: at.Generation})
}

func (r *Reconciler) writeStatus(ctx context.Context, at *operatorsv1alpha1.AppType, st operatorsv1alpha1.AppTypeStatus) error {
	orig := at.DeepCopy()
	at.Status = st
	if err := r.writes.Patch(ctx, r, orig, at); err != nil {
		return err
	}
	metrics.ResolutionChanged(apimeta.FindStatusCondition(orig.Status.Conditions, operatorsv1alpha1.ConditionResolved),
		apimeta.FindStatusCondition(st.Conditions, operatorsv1alpha1.ConditionResolved))
	return nil
}

// SetupWithManager registers the loop: AppTypes, their OperatorVersions, and catalog changes.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := fieldindex.Register(context.Background(), mgr.GetCache()); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).Named("apptype").WithOptions(outage.Controller()).
		For(&operatorsv1alpha1.AppType{}).
		Watches(&operatorsv1alpha1.OperatorVersion{}, handler.EnqueueRequestsFromMapFunc(r.forVersion)).
		Watches(&operatorsv1alpha1.CatalogSource{}, handler.EnqueueRequestsFromMapFunc(r.forCatalog), registry.CatalogChanged()).
		Complete(r)
}

// forVersion maps an OperatorVersion to the AppTypes of its package in its namespace.
func (r *Reconciler) forVersion(ctx context.Context, obj client.Object) []reconcile.Request {
	ov, ok := obj.(*operatorsv1alpha1.OperatorVersion)
	if !ok {
		return nil
	}
	return registry.AppTypeRequests(ctx, r, ov.Namespace, ov.Spec.PackageName)
}

// forCatalog maps a catalog change to the AppTypes that may resolve from it: its namespace's, or all when it is
// in ALM's namespace.
func (r *Reconciler) forCatalog(ctx context.Context, obj client.Object) []reconcile.Request {
	return registry.AppTypeRequests(ctx, r, registry.Serves(obj.GetNamespace(), r.Namespace), "")
}
