package installer

import (
	"context"

	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/internal/fieldindex"
	"github.com/almproject/alm/controllers/metrics"
)

// Watch adds the watches an installing loop needs to b: every OperatorVersion of the same package when one
// changes (a predecessor appears, succeeds or goes away) and every one that requires its package (a dependency is
// met), the OperatorVersions a Deployment belongs to (rollout
// progress), and the OperatorVersions that require a CRD (it appears or becomes Established).
func Watch(b *builder.Builder, c client.Client) *builder.Builder {
	return b.
		Watches(&operatorsv1alpha1.OperatorVersion{}, handler.EnqueueRequestsFromMapFunc(samePackage(c))).
		Watches(&appsv1.Deployment{}, handler.EnqueueRequestsFromMapFunc(owners)).
		Watches(&apiextensionsv1.CustomResourceDefinition{}, handler.EnqueueRequestsFromMapFunc(requiring(c)))
}

func samePackage(c client.Client) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		ov, ok := obj.(*operatorsv1alpha1.OperatorVersion)
		if !ok {
			return nil
		}
		// The versions of its package and those that require it, found by the cache's indexes.
		var out []reconcile.Request
		for _, field := range []string{fieldindex.OperatorVersionPackage, fieldindex.OperatorVersionRequires} {
			for _, req := range fieldindex.Requests(ctx, c, &operatorsv1alpha1.OperatorVersionList{}, ov.Namespace, field, ov.Spec.PackageName) {
				if req.Name != ov.Name {
					out = append(out, req)
				}
			}
		}
		return out
	}
}

// owners maps an object to every OperatorVersion in its ownerReferences, controller or not: during an upgrade
// the new version co-owns the Deployment it is rolling out.
func owners(_ context.Context, obj client.Object) []reconcile.Request {
	var out []reconcile.Request
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Kind == "OperatorVersion" && ref.APIVersion == operatorsv1alpha1.GroupVersion.String() {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}})
		}
	}
	return out
}

func requiring(c client.Client) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		list := &operatorsv1alpha1.OperatorVersionList{}
		if err := c.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			return nil
		}
		var out []reconcile.Request
		for _, ov := range list.Items {
			// The cache's objects (shared by the OperatorVersions of one bundle, package slim): read, never appended to.
			crds := ov.Spec.CustomResourceDefinitions
			if names(crds.Required, obj.GetName()) || names(crds.Owned, obj.GetName()) {
				out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ov.Namespace, Name: ov.Name}})
			}
		}
		return out
	}
}

// WriteStatus writes st as ov's status if it differs from what is stored: one status write per reconcile. A write
// that happened is remembered (see Stale).
func (in *Installer) WriteStatus(ctx context.Context, ov *operatorsv1alpha1.OperatorVersion, st operatorsv1alpha1.OperatorVersionStatus) error {
	orig := ov.DeepCopy()
	ov.Status = st
	if err := in.Writes.Patch(ctx, in.Client, orig, ov); err != nil {
		return err
	}
	metrics.PhaseChanged(ov, orig.Status.Phase, st.Phase, in.Loop)
	return nil
}

// names says whether descs name the CRD name.
func names(descs []opv1alpha1.CRDDescription, name string) bool {
	for i := range descs {
		if descs[i].Name == name {
			return true
		}
	}
	return false
}
