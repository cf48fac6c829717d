// Package fieldindex names the fields ALM's loops find objects by in the manager's cache, and registers their
// indexes. A loop that lists "the OperatorVersions of package p in namespace n" asks the cache for exactly those
// (client.MatchingFields), instead of listing the namespace and filtering: the list then neither walks nor copies
// the namespace's other objects, which at a thousand installs was most of what ALM allocated.
//
// OperatorVersionPackage and AppTypePackage are also selectable fields of their CRDs (spec.selectableFields), so
// the same list works on a client that reads the API server (kubectl get ov --field-selector spec.packageName=p).
// OperatorVersionRequires is the cache's alone.
package fieldindex

import (
	"context"
	"fmt"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

const (
	// OperatorVersionPackage indexes OperatorVersions by spec.packageName.
	OperatorVersionPackage = "spec.packageName"
	// AppTypePackage indexes AppTypes by spec.package.
	AppTypePackage = "spec.package"
	// OperatorVersionRequires indexes OperatorVersions by the packages they require (spec.requiredPackages[].name).
	OperatorVersionRequires = "alm.requiredPackage"
)

// Index is one field index: its name, the object kind and how its values are read from an object.
type Index struct {
	Field   string
	Object  client.Object
	Extract client.IndexerFunc
}

// All are ALM's field indexes.
var All = []Index{
	{Field: OperatorVersionPackage, Object: &operatorsv1alpha1.OperatorVersion{}, Extract: func(o client.Object) []string {
		return []string{o.(*operatorsv1alpha1.OperatorVersion).Spec.PackageName}
	}},
	{Field: OperatorVersionRequires, Object: &operatorsv1alpha1.OperatorVersion{}, Extract: func(o client.Object) []string {
		deps := o.(*operatorsv1alpha1.OperatorVersion).Spec.RequiredPackages
		out := make([]string, 0, len(deps))
		for _, dep := range deps {
			out = append(out, dep.Name)
		}
		return out
	}},
	{Field: AppTypePackage, Object: &operatorsv1alpha1.AppType{}, Extract: func(o client.Object) []string {
		return []string{o.(*operatorsv1alpha1.AppType).Spec.Package}
	}},
}

// Register adds every index of All to c that it does not have yet, so that each loop's SetupWithManager may call
// it and a manager that runs several loops indexes each field once.
func Register(ctx context.Context, c cache.Cache) error {
	for _, ix := range All {
		inf, err := c.GetInformer(ctx, ix.Object)
		if err != nil {
			return fmt.Errorf("indexing %T by %s: %w", ix.Object, ix.Field, err)
		}
		if indexed, ok := inf.(interface{ GetIndexer() toolscache.Indexer }); ok {
			if _, exists := indexed.GetIndexer().GetIndexers()["field:"+ix.Field]; exists {
				continue
			}
		}
		if err := c.IndexField(ctx, ix.Object, ix.Field, ix.Extract); err != nil {
			return fmt.Errorf("indexing %T by %s: %w", ix.Object, ix.Field, err)
		}
	}
	return nil
}

// Requests lists into list the objects of namespace ("" for every namespace) whose field has value (every object
// when value is ""), from the cache's objects without copies, and returns a request for each; nil when the cache
// cannot answer. For map functions, which only read.
func Requests(ctx context.Context, c client.Reader, list client.ObjectList, namespace, field, value string) []reconcile.Request {
	opts := []client.ListOption{client.InNamespace(namespace), client.UnsafeDisableDeepCopy}
	if value != "" {
		opts = append(opts, client.MatchingFields{field: value})
	}
	if err := c.List(ctx, list, opts...); err != nil {
		return nil
	}
	var out []reconcile.Request
	_ = apimeta.EachListItem(list, func(o runtime.Object) error {
		if obj, ok := o.(client.Object); ok {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
		}
		return nil
	})
	return out
}
