// Package versions answers which OperatorVersions replace which: the upgrade graph of the versions installed in one
// namespace, by the catalog's upgrade rule, and which of them is the installed one. The decisions are pure; the list
// helpers only read, and Create is the one way the catalog loops create an OperatorVersion for an AppType.
package versions

import (
	"context"
	"fmt"

	"github.com/blang/semver/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/index"
	"github.com/almproject/alm/controllers/internal/fieldindex"
	"github.com/almproject/alm/controllers/internal/ownership"
)

// Replaces says whether newer upgrades from older: same package and namespace, and by the catalog's upgrade rule
// (index.Upgrade.EdgeFrom) newer is the newer version and names older in spec.replaces or spec.skips, or
// older's version is in newer's spec.skipRange.
//
// A rollback (spec.rollbackFrom) turns the rule around for the version it goes back from: the rollback replaces
// it although it is older, it does not replace the rollback (a version created again later under its name, with
// another UID, does), and the rollback stands in for it: a version that upgrades from it upgrades from the rollback.
func Replaces(newer, older *operatorsv1alpha1.OperatorVersion) bool {
	if newer.Name == older.Name || newer.Namespace != older.Namespace || newer.Spec.PackageName != older.Spec.PackageName {
		return false
	}
	if back := newer.Spec.RollbackFrom; back != nil && back.Name == older.Name && (back.UID == "" || back.UID == older.UID) {
		return true
	}
	up := index.UpgradeOf(newer)
	if back := older.Spec.RollbackFrom; back != nil {
		if back.Name == newer.Name && (back.UID == "" || back.UID == newer.UID) {
			return false
		}
		if v, err := semver.ParseTolerant(back.Version); err == nil && up.EdgeFrom(back.Name, v) != "" {
			return true
		}
	}
	return up.EdgeFrom(older.Name, older.Spec.Version.Version) != ""
}

// Predecessors are the versions in all that newer replaces.
func Predecessors(newer *operatorsv1alpha1.OperatorVersion, all []operatorsv1alpha1.OperatorVersion) []*operatorsv1alpha1.OperatorVersion {
	var out []*operatorsv1alpha1.OperatorVersion
	for i := range all {
		if Replaces(newer, &all[i]) {
			out = append(out, &all[i])
		}
	}
	return out
}

// Successors are the versions in all that replace older.
func Successors(older *operatorsv1alpha1.OperatorVersion, all []operatorsv1alpha1.OperatorVersion) []*operatorsv1alpha1.OperatorVersion {
	var out []*operatorsv1alpha1.OperatorVersion
	for i := range all {
		if Replaces(&all[i], older) {
			out = append(out, &all[i])
		}
	}
	return out
}

// Chain is every version newer replaces directly or through versions that are still installed (a failed
// intermediate version included), nearest first.
func Chain(newer *operatorsv1alpha1.OperatorVersion, all []operatorsv1alpha1.OperatorVersion) []*operatorsv1alpha1.OperatorVersion {
	seen := map[string]bool{newer.Name: true}
	var out []*operatorsv1alpha1.OperatorVersion
	queue := []*operatorsv1alpha1.OperatorVersion{newer}
	for len(queue) > 0 {
		current := queue[0]
		queue = queue[1:]
		for _, p := range Predecessors(current, all) {
			if !seen[p.Name] {
				seen[p.Name] = true
				out = append(out, p)
				queue = append(queue, p)
			}
		}
	}
	return out
}

// Installed is the installed version of a package: the highest version that no other version replaces and that
// is not being deleted; nil when there is none. (index.Channel.Head is something else: a channel's newest entry.)
func Installed(all []operatorsv1alpha1.OperatorVersion) *operatorsv1alpha1.OperatorVersion {
	var installed *operatorsv1alpha1.OperatorVersion
	for i := range all {
		ov := &all[i]
		if len(Successors(ov, all)) > 0 || !ov.DeletionTimestamp.IsZero() {
			continue
		}
		if installed == nil || ov.Spec.Version.GT(installed.Spec.Version.Version) {
			installed = ov
		}
	}
	return installed
}

// Create creates ov for at: owned by the AppType (deleting the AppType uninstalls), labelled with its package,
// installed as the AppType's spec.serviceAccountName, and carrying finalizers from the start
// (the loops' Options.VersionFinalizers: the install loop's cleanup finalizer when the loop that removes it runs in
// the same manager, which saves the install loop a request per version).
// An OperatorVersion that already exists is left as it is.
func Create(ctx context.Context, c client.Client, at *operatorsv1alpha1.AppType, ov *operatorsv1alpha1.OperatorVersion, finalizers []string) error {
	if err := controllerutil.SetControllerReference(at, ov, c.Scheme()); err != nil {
		return err
	}
	if ov.Labels == nil {
		ov.Labels = map[string]string{}
	}
	ov.Labels[operatorsv1alpha1.LabelAppType] = ownership.LabelValue(at.Spec.Package)
	ov.Spec.ServiceAccountName = at.Spec.ServiceAccountName
	for _, f := range finalizers {
		controllerutil.AddFinalizer(ov, f)
	}
	if err := c.Create(ctx, ov); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating OperatorVersion %s/%s for AppType %s: %w", ov.Namespace, ov.Name, at.Name, err)
	}
	return nil
}

// GetActive reads the OperatorVersion key (a copy the caller may change) and the versions of its package in its
// namespace (all, itself included, read-only: OfPackage), from the cache. It returns nil, and no error, when the OperatorVersion is gone, being deleted or Replacing: no
// lifecycle decision concerns it any more.
func GetActive(ctx context.Context, c client.Reader, key client.ObjectKey) (*operatorsv1alpha1.OperatorVersion, []operatorsv1alpha1.OperatorVersion, error) {
	ov := &operatorsv1alpha1.OperatorVersion{}
	if err := c.Get(ctx, key, ov); err != nil {
		return nil, nil, client.IgnoreNotFound(err)
	}
	if !ov.DeletionTimestamp.IsZero() || ov.Status.Phase == operatorsv1alpha1.PhaseReplacing {
		return nil, nil, nil
	}
	all, err := OfPackage(ctx, c, ov.Namespace, ov.Spec.PackageName)
	if err != nil {
		return nil, nil, err
	}
	return ov, all, nil
}

// OfPackage lists the OperatorVersions of a package in a namespace, from the cache, read-only: they share their
// labels, lists and install strategy with the cache's objects, so a caller that changes one (or writes it, which
// decodes the answer into it) works on a DeepCopy of it. Deep copies of every version at every reconcile of six
// loops were 15% of what ALM allocated in BenchmarkScale (its heap profile); without them an upgrade allocates 13%
// less (upgrade-alloc-kB/upgrade). The cache finds them by its package index (fieldindex.OperatorVersionPackage),
// so the namespace's other versions are neither walked nor copied.
func OfPackage(ctx context.Context, c client.Reader, namespace, pkg string) ([]operatorsv1alpha1.OperatorVersion, error) {
	list := &operatorsv1alpha1.OperatorVersionList{}
	if err := c.List(ctx, list, client.InNamespace(namespace), client.MatchingFields{fieldindex.OperatorVersionPackage: pkg},
		client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	return list.Items, nil
}
