// Package versions answers which OperatorVersions replace which: the upgrade graph of the versions installed in one
// namespace. The decisions are pure; the list helpers only read.
package versions

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog"
)

// Replaces says whether newer upgrades from older: same package and namespace, and by the catalog's upgrade rule
// (catalog.Upgrade.EdgeFrom) newer is the newer version and names older in spec.replaces or spec.skips, or
// older's version is in newer's spec.skipRange.
func Replaces(newer, older *operatorsv1alpha1.OperatorVersion) bool {
	if newer.Name == older.Name || newer.Namespace != older.Namespace || newer.Spec.PackageName != older.Spec.PackageName {
		return false
	}
	return catalog.UpgradeOf(newer).EdgeFrom(older.Name, older.Spec.Version.Version) != ""
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

// OfPackage lists the OperatorVersions of a package in a namespace, from the cache.
func OfPackage(ctx context.Context, c client.Reader, namespace, pkg string) ([]operatorsv1alpha1.OperatorVersion, error) {
	list := &operatorsv1alpha1.OperatorVersionList{}
	if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	out := list.Items[:0]
	for _, ov := range list.Items {
		if ov.Spec.PackageName == pkg {
			out = append(out, ov)
		}
	}
	return out, nil
}
