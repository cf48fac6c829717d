package apptype

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/bundlediff"
	"github.com/almproject/alm/catalog/index"
	"github.com/almproject/alm/controllers/registry"
)

// setUpgradePreview sets st.upgradePreview to what upgrading from the installed version to the offered one
// (st.availableUpgrade, the version approvedVersion approves) would change, computed from the two catalog bundles;
// it removes it when nothing is offered. A preview of the same two versions is kept rather than computed again.
func setUpgradePreview(st *operatorsv1alpha1.AppTypeStatus, ix *index.Index, pkg string, installed *operatorsv1alpha1.OperatorVersion, res index.Result, manifests manifestsFunc) {
	if installed == nil || st.AvailableUpgrade == "" || res.Chosen == nil {
		st.UpgradePreview = nil
		return
	}
	from, to := installed.Spec.Version.String(), st.AvailableUpgrade
	if !previewStale(st.UpgradePreview, from, to) {
		return
	}
	st.UpgradePreview = computePreview(ix.Bundle(pkg, installed.Name), res.Chosen.Bundle, from, to, manifests)
}

// manifestsFunc reads a catalog bundle's manifests.
type manifestsFunc func(*bundle.Bundle) (*bundle.Manifests, error)

// manifests reads a catalog bundle's manifests: from the catalog when it holds them, else from its bundle image,
// pulled with the pull options of its image CatalogSource through the bundle cache the install loops share (the
// offered version's image is the one the upgrade pulls next).
func (r *Reconciler) manifests(ctx context.Context) manifestsFunc {
	return func(b *bundle.Bundle) (*bundle.Manifests, error) {
		m, err := b.Manifests()
		ref := registry.Reference(b.Catalog)
		if !errors.Is(err, bundle.ErrNoManifests) || b.Image == "" || r.Bundles == nil || ref == nil {
			return m, err
		}
		reader := r.Reader
		if reader == nil {
			reader = r.Client
		}
		return r.Bundles.Manifests(ctx, reader, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, b.Image, b.ImageDigest)
	}
}

// previewStale says whether a preview must be computed (again) for an upgrade from -> to: there is none, it is of
// other versions, or it could not be computed last time.
func previewStale(p *operatorsv1alpha1.UpgradePreview, from, to string) bool {
	return p == nil || p.From != from || p.To != to || p.Error != ""
}

// computePreview diffs the installed bundle against the offered one; a preview that cannot be computed says why.
func computePreview(installed, offered *bundle.Bundle, from, to string, manifests manifestsFunc) *operatorsv1alpha1.UpgradePreview {
	unavailable := func(format string, args ...any) *operatorsv1alpha1.UpgradePreview {
		return &operatorsv1alpha1.UpgradePreview{From: from, To: to, Summary: "preview unavailable",
			Error: bundlediff.Clip(fmt.Sprintf(format, args...))}
	}
	if installed == nil {
		return unavailable("the installed version %s is no longer in any catalog", from)
	}
	older, err := manifests(installed)
	if err != nil {
		return unavailable("reading the installed bundle %s: %v", installed.Name, err)
	}
	newer, err := manifests(offered)
	if err != nil {
		return unavailable("reading the offered bundle %s: %v", offered.Name, err)
	}
	return bundlediff.Diff(older, newer).Preview(from, to)
}
