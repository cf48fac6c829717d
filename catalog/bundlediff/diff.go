// Package bundlediff computes what upgrading from one bundle to another would change — the upgrade preview an
// AppType's status, `almctl upgrade preview` and `almctl bundle diff` show: objects added, changed and removed (for
// a Deployment, its containers' images, args and env), RBAC rules granted and revoked with what the installer's
// hostile-input policy would refuse, CRD changes with the upgrade-safety verdict (crdsafety), and webhooks. It is a
// pure function of the two bundles' manifests.
package bundlediff

import (
	"sort"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/bundle"
)

// Result is every change of an upgrade, unbounded; Preview bounds it for a status.
type Result struct {
	Objects   []almv1alpha1.PreviewChange
	RBACRules []almv1alpha1.PreviewChange
	CRDs      []almv1alpha1.PreviewChange
	Webhooks  []almv1alpha1.PreviewChange
	// DeploymentAspects are what changed in the changed Deployments (image, args, env, spec), for the summary.
	DeploymentAspects []string
}

// Diff computes what installing newer over older changes. Both must be the normalized manifests of a bundle
// (bundle.Manifests).
func Diff(older, newer *bundle.Manifests) Result {
	var r Result
	r.Objects, r.DeploymentAspects = diffObjects(older, newer)
	r.RBACRules = diffRules(older, newer)
	r.CRDs = diffCRDs(older.CRDs, newer.CRDs)
	r.Webhooks = diffWebhooks(older.CSV, newer.CSV)
	for _, l := range [][]almv1alpha1.PreviewChange{r.Objects, r.RBACRules, r.CRDs, r.Webhooks} {
		sortChanges(l)
	}
	return r
}

// opOrder sorts changes: additions first, then changes, then removals.
var opOrder = map[almv1alpha1.ChangeOp]int{almv1alpha1.ChangeAdded: 0, almv1alpha1.ChangeChanged: 1, almv1alpha1.ChangeRemoved: 2}

// sortChanges puts refused changes first (a bounded list never hides one), then by op, kind, name and detail.
func sortChanges(l []almv1alpha1.PreviewChange) {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i], l[j]
		if (a.Refused != "") != (b.Refused != "") {
			return a.Refused != ""
		}
		if a.Op != b.Op {
			return opOrder[a.Op] < opOrder[b.Op]
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Detail < b.Detail
	})
}

// count counts the changes of one op.
func count(l []almv1alpha1.PreviewChange, op almv1alpha1.ChangeOp) int {
	n := 0
	for _, c := range l {
		if c.Op == op {
			n++
		}
	}
	return n
}

// refused counts the changes ALM would refuse.
func refused(l []almv1alpha1.PreviewChange) int {
	n := 0
	for _, c := range l {
		if c.Refused != "" {
			n++
		}
	}
	return n
}
