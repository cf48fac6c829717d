package authconfig

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

// SetupWithManager registers the index of token Secrets and the loop with mgr: an auth configuration is checked
// again when its Secret changes, and when a control plane that uses it goes (which may release it).
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr manager.Manager, opts controller.Options) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &konnectv1alpha1.KonnectAPIAuthConfiguration{}, indexSecretRef, func(o client.Object) []string {
		a := o.(*konnectv1alpha1.KonnectAPIAuthConfiguration)
		if a.Spec.Type != konnectv1alpha1.KonnectAPIAuthTypeSecretRef || a.Spec.SecretRef == nil {
			return nil
		}
		return []string{konnectapi.SecretNamespace(a) + "/" + a.Spec.SecretRef.Name}
	}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).Named("konnectapiauthconfiguration").
		For(&konnectv1alpha1.KonnectAPIAuthConfiguration{}).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.usersOfSecret)).
		Watches(&konnectv1alpha2.KonnectGatewayControlPlane{}, handler.EnqueueRequestsFromMapFunc(authOfControlPlane)).
		WithOptions(opts).
		Complete(r)
}

// usersOfSecret are the auth configurations that read their token from the Secret s.
func (r *Reconciler) usersOfSecret(ctx context.Context, s client.Object) []reconcile.Request {
	list := &konnectv1alpha1.KonnectAPIAuthConfigurationList{}
	if err := r.List(ctx, list, client.MatchingFields{indexSecretRef: s.GetNamespace() + "/" + s.GetName()}); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return reqs
}

// authOfControlPlane is the auth configuration a control plane uses.
func authOfControlPlane(_ context.Context, o client.Object) []reconcile.Request {
	cp := o.(*konnectv1alpha2.KonnectGatewayControlPlane)
	if cp.Spec.KonnectConfiguration.APIAuthConfigurationRef.Name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: cp.Namespace, Name: cp.Spec.KonnectConfiguration.APIAuthConfigurationRef.Name}}}
}
