package registry

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/index"
	"github.com/almproject/alm/controllers/internal/fieldindex"
)

// Request is the resolution an AppType asks for, restricted to the catalogs it may use. It fails when there is no
// catalog to resolve from, with a message that says where ALM looked, and when spec.sourceNamespace names a
// namespace other than the AppType's and ALM's (index.ErrInvalidRequest): another tenant's CatalogSource is that
// tenant's content, pulled with that tenant's registry credentials.
func (r *Registry) Request(at *operatorsv1alpha1.AppType, almNamespace string) (index.Request, error) {
	if ns := at.Spec.SourceNamespace; ns != "" && ns != at.Namespace && ns != almNamespace {
		return index.Request{}, fmt.Errorf("%w: spec.sourceNamespace %s: an AppType may use CatalogSources in its own namespace (%s) "+
			"or in ALM's namespace (%s) only; ask an admin of %s to publish to one of those", index.ErrInvalidRequest, ns, at.Namespace, almNamespace, ns)
	}
	catalogs := r.Catalogs(at.Namespace, at.Spec.Source, at.Spec.SourceNamespace, almNamespace)
	if len(catalogs) == 0 {
		return index.Request{}, fmt.Errorf("no CatalogSource in namespace %s or in ALM's namespace %s; create one or set spec.source", at.Namespace, almNamespace)
	}
	return index.Request{Package: at.Spec.Package, Channel: at.Spec.Channel, Range: at.Spec.VersionRange, Catalogs: catalogs,
		Exclude: Excluded(at)}, nil
}

// Excluded are the versions at rolled back from (status.rolledBack), which resolution does not offer it again, each
// with why; nil when there are none. A version that spec.approvedVersion names (approval: Manual) is offered: the
// user asks for it again.
func Excluded(at *operatorsv1alpha1.AppType) map[string]string {
	var out map[string]string
	for _, rb := range at.Status.RolledBack {
		if at.Spec.Approval == operatorsv1alpha1.ApprovalManual && rb.Version != "" && rb.Version == at.Spec.ApprovedVersion {
			continue
		}
		if out == nil {
			out = make(map[string]string, len(at.Status.RolledBack))
		}
		out[rb.Name] = "rolled back: " + rb.Reason
	}
	return out
}

// AppTypeFor returns the AppType that declares ov's package in ov's namespace: the controlling owner of ov if it is
// one, else an AppType with the same package; nil when there is none.
func AppTypeFor(ctx context.Context, c client.Reader, ov *operatorsv1alpha1.OperatorVersion) (*operatorsv1alpha1.AppType, error) {
	list := &operatorsv1alpha1.AppTypeList{}
	if err := c.List(ctx, list, client.InNamespace(ov.Namespace), client.MatchingFields{fieldindex.AppTypePackage: ov.Spec.PackageName}); err != nil {
		return nil, err
	}
	var match *operatorsv1alpha1.AppType
	for i := range list.Items {
		at := &list.Items[i]
		for _, ref := range ov.OwnerReferences {
			if ref.UID == at.UID {
				return at, nil
			}
		}
		if match == nil {
			match = at
		}
	}
	return match, nil
}

// AppTypeRequests are requests for the AppTypes of package pkg ("" for every package) in namespace ("" for all),
// found by the cache's package index; for map functions.
func AppTypeRequests(ctx context.Context, c client.Reader, namespace, pkg string) []reconcile.Request {
	return fieldindex.Requests(ctx, c, &operatorsv1alpha1.AppTypeList{}, namespace, fieldindex.AppTypePackage, pkg)
}
