package apptype

import (
	"fmt"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/bundlediff"
	"github.com/almproject/alm/catalog/index"
)

// setUpgradePreview sets st.upgradePreview to what upgrading from the installed version to the offered one
// (st.availableUpgrade, the version approvedVersion approves) would change, computed from the two catalog bundles;
// it removes it when nothing is offered. A preview of the same two versions is kept rather than computed again.
func setUpgradePreview(st *operatorsv1alpha1.AppTypeStatus, ix *index.Index, pkg string, installed *operatorsv1alpha1.OperatorVersion, res index.Result) {
	if installed == nil || st.AvailableUpgrade == "" || res.Chosen == nil {
		st.UpgradePreview = nil
		return
	}
	from, to := installed.Spec.Version.String(), st.AvailableUpgrade
	if !previewStale(st.UpgradePreview, from, to) {
		return
	}
	st.UpgradePreview = computePreview(ix.Bundle(pkg, installed.Name), res.Chosen.Bundle, from, to)
}

// previewStale says whether a preview must be computed (again) for an upgrade from -> to: there is none, it is of
// other versions, or it could not be computed last time.
func previewStale(p *operatorsv1alpha1.UpgradePreview, from, to string) bool {
	return p == nil || p.From != from || p.To != to || p.Error != ""
}

// computePreview diffs the installed bundle against the offered one; a preview that cannot be computed says why.
func computePreview(installed, offered *bundle.Bundle, from, to string) *operatorsv1alpha1.UpgradePreview {
	unavailable := func(format string, args ...any) *operatorsv1alpha1.UpgradePreview {
		return &operatorsv1alpha1.UpgradePreview{From: from, To: to, Summary: "preview unavailable", Error: fmt.Sprintf(format, args...)}
	}
	if installed == nil {
		return unavailable("the installed version %s is no longer in any catalog", from)
	}
	older, err := installed.Manifests()
	if err != nil {
		return unavailable("reading the installed bundle %s: %v", installed.Name, err)
	}
	newer, err := offered.Manifests()
	if err != nil {
		return unavailable("reading the offered bundle %s: %v", offered.Name, err)
	}
	return bundlediff.Diff(older, newer).Preview(from, to)
}
