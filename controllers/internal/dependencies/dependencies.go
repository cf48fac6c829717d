// Package dependencies says whether the packages an OperatorVersion requires (spec.requiredPackages) are met in its
// namespace, for the install and upgrade loops: a version of each, in its range, has Succeeded. It reads only the
// OperatorVersions and AppTypes of the namespace.
package dependencies

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/bundle"
)

// Check reads whether the packages ov requires are met in its namespace, through c. It returns one line per unmet
// dependency saying its state, and the chain of packages when a dependency (through the versions of the namespace
// that have not Succeeded) requires ov's own package: a cycle that waiting cannot resolve.
func Check(ctx context.Context, c client.Reader, ov *operatorsv1alpha1.OperatorVersion) (unmet []string, cycle string, err error) {
	if len(ov.Spec.RequiredPackages) == 0 {
		return nil, "", nil
	}
	versions := &operatorsv1alpha1.OperatorVersionList{}
	if err := c.List(ctx, versions, client.InNamespace(ov.Namespace)); err != nil {
		return nil, "", err
	}
	appTypes := &operatorsv1alpha1.AppTypeList{}
	if err := c.List(ctx, appTypes, client.InNamespace(ov.Namespace)); err != nil {
		return nil, "", err
	}
	for _, dep := range ov.Spec.RequiredPackages {
		if state := dependencyState(dep, versions.Items, appTypes.Items); state != "" {
			unmet = append(unmet, state)
		}
	}
	if len(unmet) > 0 {
		cycle = Cycle(ov, versions.Items)
	}
	return unmet, cycle, nil
}

// dependencyState is "" when a Succeeded version of dep's package is in its range, else what the namespace holds
// of it: its versions and their phases, or its AppType's resolution, or that nothing declares it yet.
func dependencyState(dep operatorsv1alpha1.RequiredPackage, versions []operatorsv1alpha1.OperatorVersion, appTypes []operatorsv1alpha1.AppType) string {
	req := bundle.PackageRequirement{Package: dep.Name, Range: dep.VersionRange}
	what := dep.Name
	if dep.VersionRange != "" {
		what += " " + dep.VersionRange
	}
	var seen []string
	for _, v := range versions {
		if v.Spec.PackageName != dep.Name || !v.DeletionTimestamp.IsZero() {
			continue
		}
		fits := req.Allows(v.Spec.Version.Version)
		if fits && v.Status.Phase == operatorsv1alpha1.PhaseSucceeded {
			return ""
		}
		state := fmt.Sprintf("%s %s", v.Spec.Version, phaseOf(v))
		if !fits {
			state += ", outside the range"
		}
		seen = append(seen, state)
	}
	if len(seen) > 0 {
		sort.Strings(seen)
		return what + ": " + strings.Join(seen, "; ")
	}
	for _, at := range appTypes {
		if at.Spec.Package != dep.Name {
			continue
		}
		if c := apimeta.FindStatusCondition(at.Status.Conditions, operatorsv1alpha1.ConditionResolved); c != nil && c.Status != "True" {
			return fmt.Sprintf("%s: AppType %s cannot install it: %s", what, at.Name, c.Message)
		}
		return fmt.Sprintf("%s: AppType %s declares it, no version installed yet", what, at.Name)
	}
	return what + ": not declared yet (the requirements loop declares an AppType for it)"
}

func phaseOf(v operatorsv1alpha1.OperatorVersion) string {
	if v.Status.Phase == "" {
		return "new"
	}
	return string(v.Status.Phase)
}

// Cycle is the chain "a -> b -> a" when the packages ov requires lead back to ov's package through the
// requirements of versions of the namespace that have not Succeeded; "" when they do not.
func Cycle(ov *operatorsv1alpha1.OperatorVersion, versions []operatorsv1alpha1.OperatorVersion) string {
	requires := map[string][]string{} // package -> packages its waiting versions require
	for _, v := range versions {
		if v.Status.Phase == operatorsv1alpha1.PhaseSucceeded || !v.DeletionTimestamp.IsZero() {
			continue
		}
		for _, dep := range v.Spec.RequiredPackages {
			requires[v.Spec.PackageName] = append(requires[v.Spec.PackageName], dep.Name)
		}
	}
	for _, dep := range ov.Spec.RequiredPackages {
		requires[ov.Spec.PackageName] = append(requires[ov.Spec.PackageName], dep.Name)
	}
	start := ov.Spec.PackageName
	visited := map[string]bool{}
	var walk func(pkg string, path []string) []string
	walk = func(pkg string, path []string) []string {
		for _, next := range requires[pkg] {
			if next == start {
				return append(path, next)
			}
			if !visited[next] {
				visited[next] = true
				if found := walk(next, append(path, next)); found != nil {
					return found
				}
			}
		}
		return nil
	}
	if chain := walk(start, []string{start}); chain != nil {
		return strings.Join(chain, " -> ")
	}
	return ""
}
