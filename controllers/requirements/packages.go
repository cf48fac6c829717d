package requirements

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// AnnotationCreatedForDependency on an AppType the requirements loop declared names the OperatorVersions whose
// dependency it installs (comma-separated).
const AnnotationCreatedForDependency = "operators.alm.dev/created-for-dependency"

// declareDependencies makes sure every package ov depends on is declared in ov's namespace: for a package no
// AppType declares, it creates one whose version range is what every pending version there requires of it (the
// ranges joined: each must hold), acting for the same ServiceAccount as ov. An AppType that exists is left as it
// is; the install loop reports whether what it installs fits.
func (r *Reconciler) declareDependencies(ctx context.Context, ov *operatorsv1alpha1.OperatorVersion) error {
	if len(ov.Spec.RequiredPackages) == 0 {
		return nil
	}
	appTypes := &operatorsv1alpha1.AppTypeList{}
	if err := r.List(ctx, appTypes, client.InNamespace(ov.Namespace)); err != nil {
		return err
	}
	declared := map[string]bool{}
	for _, at := range appTypes.Items {
		declared[at.Spec.Package] = true
	}
	versions := &operatorsv1alpha1.OperatorVersionList{}
	if err := r.List(ctx, versions, client.InNamespace(ov.Namespace)); err != nil {
		return err
	}
	for _, dep := range ov.Spec.RequiredPackages {
		if declared[dep.Name] {
			continue
		}
		ranges, requirers := requiredOf(dep.Name, versions.Items)
		at := &operatorsv1alpha1.AppType{
			ObjectMeta: metav1.ObjectMeta{Namespace: ov.Namespace, Name: dep.Name,
				Annotations: map[string]string{AnnotationCreatedForDependency: strings.Join(requirers, ",")}},
			Spec: operatorsv1alpha1.AppTypeSpec{Package: dep.Name, VersionRange: strings.Join(ranges, " "),
				Approval: operatorsv1alpha1.ApprovalAutomatic, ServiceAccountName: ov.Spec.ServiceAccountName},
		}
		if err := r.Create(ctx, at); err != nil {
			if apierrors.IsAlreadyExists(err) {
				continue // an AppType of another package has this name; the install loop reports the dependency as missing
			}
			return fmt.Errorf("creating AppType %s/%s for the dependency of %s: %w", ov.Namespace, dep.Name, ov.Name, err)
		}
		r.Recorder.Eventf(ov, at, corev1.EventTypeNormal, "DependencyDeclared", "CreateAppType",
			"Declared AppType %s (package %s, versionRange %q) for the dependency of %s", at.Name, dep.Name, at.Spec.VersionRange, strings.Join(requirers, ", "))
	}
	return nil
}

// requiredOf is what the pending versions of versions require of package pkg: their distinct ranges, and their
// names, sorted.
func requiredOf(pkg string, versions []operatorsv1alpha1.OperatorVersion) (ranges, requirers []string) {
	seen := map[string]bool{}
	for i := range versions {
		v := &versions[i]
		if !Pending(v) {
			continue
		}
		for _, dep := range v.Spec.RequiredPackages {
			if dep.Name != pkg {
				continue
			}
			requirers = append(requirers, v.Name)
			if dep.VersionRange != "" && !seen[dep.VersionRange] {
				seen[dep.VersionRange] = true
				ranges = append(ranges, dep.VersionRange)
			}
		}
	}
	sort.Strings(ranges)
	sort.Strings(requirers)
	return ranges, requirers
}
