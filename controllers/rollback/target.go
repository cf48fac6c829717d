package rollback

import (
	"context"
	"fmt"
	"strings"

	"github.com/blang/semver/v4"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/crdsafety"
	"github.com/almproject/alm/catalog/index"
	"github.com/almproject/alm/controllers/internal/installer"
	"github.com/almproject/alm/controllers/registry"
)

// channelBundles are the bundles of at's package in its channel and catalogs (every version, no upgrade rule),
// highest catalog priority first: where a rollback's version comes from.
func (r *Reconciler) channelBundles(at *operatorsv1alpha1.AppType) (index.Result, []index.Candidate, error) {
	request, err := r.Registry.Request(at, r.Namespace)
	if err != nil {
		return index.Result{}, nil, err
	}
	request.Range, request.Exclude = "", nil
	res, err := r.Registry.Index().Resolve(request)
	if err != nil {
		return res, nil, err
	}
	var out []index.Candidate
	for _, c := range res.Candidates {
		if c.Bundle != nil && c.Entry != nil && c.Reason != index.ReasonCatalogNotSelected {
			out = append(out, c)
		}
	}
	return res, out, nil
}

// versionsOf are the versions of bundles.
func versionsOf(bundles []index.Candidate) []semver.Version {
	out := make([]semver.Version, 0, len(bundles))
	for _, b := range bundles {
		out = append(out, b.Version)
	}
	return out
}

// rollbackVersion builds the OperatorVersion that installs d's target again in place of d.From: the catalog's
// bundle (by name, else by version), with spec.rollbackFrom, and spec.replaces naming d.From (its webhooks' CA,
// and `kubectl get ov` shows what it replaces); it upgrades from nothing else.
func rollbackVersion(at *operatorsv1alpha1.AppType, res index.Result, bundles []index.Candidate, d Decision) (*operatorsv1alpha1.OperatorVersion, error) {
	var chosen *index.Candidate
	for i := range bundles {
		b := &bundles[i]
		if (d.Target != "" && b.Name == d.Target) || (chosen == nil && b.Version.EQ(d.TargetVersion)) {
			chosen = b
			if b.Name == d.Target {
				break
			}
		}
	}
	if chosen == nil {
		return nil, fmt.Errorf("%s (version %s) is not in channel %s of the AppType's catalogs", orVersion(d), d.TargetVersion, res.Channel)
	}
	res.Chosen = chosen
	ov, err := res.OperatorVersion(at.Namespace)
	if err != nil {
		return nil, err
	}
	ov.Spec.Source = registry.Reference(chosen.Catalog)
	ov.Spec.Replaces, ov.Spec.Skips, ov.Spec.SkipRange = d.From.Name, nil, ""
	ov.Spec.RollbackFrom = &operatorsv1alpha1.RollbackSource{Name: d.From.Name, UID: d.From.UID, Version: d.From.Spec.Version.String(),
		Reason: truncate(d.Reason, 1000), Automatic: d.Automatic}
	return ov, nil
}

func orVersion(d Decision) string {
	if d.Target != "" {
		return d.Target
	}
	return "a bundle"
}

// unsafeError is a CRD of the rollback version that would drop a stored version or invalidate existing objects.
type unsafeError struct{ error }

// checkCRDs refuses a rollback whose CRDs would drop a version still in a CRD's status.storedVersions or make
// existing objects invalid (crdsafety.UpdateSafe, as the installer checks every CRD update).
func (r *Reconciler) checkCRDs(ctx context.Context, ov *operatorsv1alpha1.OperatorVersion) error {
	for _, raw := range ov.Spec.Objects {
		desiredU := &unstructured.Unstructured{}
		if err := desiredU.UnmarshalJSON(raw.Raw); err != nil || desiredU.GetKind() != "CustomResourceDefinition" {
			continue
		}
		desired := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(desiredU.Object, desired); err != nil {
			return &unsafeError{fmt.Errorf("CRD %s of %s is malformed: %w", desiredU.GetName(), ov.Name, err)}
		}
		existing := &apiextensionsv1.CustomResourceDefinition{}
		if err := r.Get(ctx, client.ObjectKey{Name: desired.Name}, existing); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return err
		}
		if existing.Annotations[operatorsv1alpha1.AnnotationAppliedHash] == installer.Hash(desiredU) {
			continue
		}
		objects, err := r.customResources(ctx, existing)
		if err != nil {
			return err
		}
		if err := crdsafety.UpdateSafe(existing, desired, objects); err != nil {
			return &unsafeError{err}
		}
	}
	return nil
}

// customResources lists the objects of every served version of crd.
func (r *Reconciler) customResources(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) ([]unstructured.Unstructured, error) {
	var out []unstructured.Unstructured
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.ListKind})
		if err := r.Reader.List(ctx, list); err != nil {
			return nil, fmt.Errorf("listing %s to check the rollback's CRD: %w", crd.Name, err)
		}
		out = append(out, list.Items...)
	}
	return out, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.TrimSpace(s[:n]) + "..."
}
