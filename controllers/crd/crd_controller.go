// Package crd is the CRD loop: an ALM-labelled CRD whose providing package has no AppType in the namespace that
// needed it gets one created, so the operator that owns the CRD is installed too.
package crd

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/internal/ownership"
	"github.com/almproject/alm/controllers/registry"
	"github.com/almproject/alm/internal/outage"
)

// Reconciler makes sure the package providing an ALM-managed CRD is declared where the CRD is needed.
type Reconciler struct {
	client.Client
	Registry *registry.Registry
	Recorder events.EventRecorder
}

// Reconcile creates the AppType for one CRD's providing package, if missing.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := r.Get(ctx, req.NamespacedName, crd); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	namespace := crd.Labels[operatorsv1alpha1.LabelOwnerNamespace]
	if namespace == "" || !crd.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	// The label holds a label-safe form of the package name; the catalog knows the real one.
	pkg := providingPackage(crd.Labels[operatorsv1alpha1.LabelAppType], r.Registry.Index().OwnerPackages(servedGVK(crd)))
	list := &operatorsv1alpha1.AppTypeList{}
	if err := r.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return ctrl.Result{}, err
	}
	for _, at := range list.Items {
		if at.Spec.Package == pkg {
			return ctrl.Result{}, nil
		}
	}
	ovs := &operatorsv1alpha1.OperatorVersionList{}
	if err := r.List(ctx, ovs, client.InNamespace(namespace)); err != nil {
		return ctrl.Result{}, err
	}
	for _, ov := range ovs.Items {
		if ov.Spec.PackageName == pkg {
			return ctrl.Result{}, nil // installed without an AppType; leave it be
		}
	}
	at := &operatorsv1alpha1.AppType{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: pkg,
			Annotations: map[string]string{"operators.alm.dev/created-for-crd": crd.Name}},
		Spec: operatorsv1alpha1.AppTypeSpec{Package: pkg, Approval: operatorsv1alpha1.ApprovalAutomatic},
	}
	if err := r.Create(ctx, at); err != nil && !apierrors.IsAlreadyExists(err) {
		return ctrl.Result{}, fmt.Errorf("creating AppType %s/%s for CRD %s: %w", namespace, pkg, crd.Name, err)
	}
	r.Recorder.Eventf(at, nil, corev1.EventTypeNormal, "CreatedForCRD", "Create",
		"Created to install package %s, which provides CRD %s needed in namespace %s", pkg, crd.Name, namespace)
	return ctrl.Result{}, nil
}

// providingPackage is the package that provides a CRD: of the catalog's owners of its kind, the one whose label
// value is on the CRD (two packages of a catalog may own one CRD; the one installed here provides it), else the first.
func providingPackage(label string, owners []string) string {
	for _, o := range owners {
		if ownership.LabelValue(o) == label {
			return o
		}
	}
	if len(owners) > 0 {
		return owners[0]
	}
	return label
}

// servedGVK is the storage version's kind of crd.
func servedGVK(crd *apiextensionsv1.CustomResourceDefinition) (gvk schema.GroupVersionKind) {
	gvk.Group, gvk.Kind = crd.Spec.Group, crd.Spec.Names.Kind
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			gvk.Version = v.Name
		}
	}
	return gvk
}

// SetupWithManager registers the loop for ALM-labelled CRDs.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	labelled := predicate.NewPredicateFuncs(func(obj client.Object) bool {
		_, ok := obj.GetLabels()[operatorsv1alpha1.LabelAppType]
		return ok
	})
	return ctrl.NewControllerManagedBy(mgr).Named("crd").WithOptions(outage.Controller()).
		For(&apiextensionsv1.CustomResourceDefinition{}, builder.WithPredicates(labelled)).
		Complete(r)
}
