package authconfig

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

// FinalizerTokenInUse keeps an auth configuration's token Secret while the configuration exists: deleting the
// Secret together with everything else (e.g. the whole namespace) must still let the control planes and their
// entities be deleted from Konnect with that token, instead of leaving them orphaned there.
const FinalizerTokenInUse = "konnect.alm.dev/token-in-use"

// tokenSecret returns the Secret auth reads its token from; nil when auth has none, when it does not exist, or
// when it is in another namespace (refused by rule secret-namespace: such a Secret is never read, nor held).
func (r *Reconciler) tokenSecret(ctx context.Context, auth *konnectv1alpha1.KonnectAPIAuthConfiguration) (*corev1.Secret, error) {
	if auth.Spec.Type != konnectv1alpha1.KonnectAPIAuthTypeSecretRef || auth.Spec.SecretRef == nil || auth.Spec.SecretRef.Name == "" ||
		konnectapi.SecretNamespace(auth) != auth.Namespace {
		return nil, nil
	}
	secret := &corev1.Secret{}
	key := types.NamespacedName{Namespace: auth.Namespace, Name: auth.Spec.SecretRef.Name}
	if err := r.Get(ctx, key, secret); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return secret, nil
}

// holdSecret puts FinalizerTokenInUse on the token Secret of auth.
func (r *Reconciler) holdSecret(ctx context.Context, auth *konnectv1alpha1.KonnectAPIAuthConfiguration) error {
	secret, err := r.tokenSecret(ctx, auth)
	if err != nil || secret == nil || !secret.DeletionTimestamp.IsZero() || !controllerutil.AddFinalizer(secret, FinalizerTokenInUse) {
		return err
	}
	if err := r.Update(ctx, secret); err != nil {
		return ignoreConflict(client.IgnoreNotFound(fmt.Errorf("adding finalizer to Secret %s used by %s: %w", klog.KObj(secret), klog.KObj(auth), err)))
	}
	return nil
}

// releaseSecret removes FinalizerTokenInUse from the token Secret of auth (which is going away), unless another
// auth configuration that is not being deleted reads its token from it too.
func (r *Reconciler) releaseSecret(ctx context.Context, auth *konnectv1alpha1.KonnectAPIAuthConfiguration) error {
	secret, err := r.tokenSecret(ctx, auth)
	if err != nil || secret == nil || !controllerutil.ContainsFinalizer(secret, FinalizerTokenInUse) {
		return err
	}
	users := &konnectv1alpha1.KonnectAPIAuthConfigurationList{}
	if err := r.List(ctx, users, client.MatchingFields{indexSecretRef: secret.Namespace + "/" + secret.Name}); err != nil {
		return err
	}
	for _, u := range users.Items {
		if u.UID != auth.UID && u.DeletionTimestamp.IsZero() {
			return nil
		}
	}
	controllerutil.RemoveFinalizer(secret, FinalizerTokenInUse)
	if err := r.Update(ctx, secret); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("removing finalizer from Secret %s: %w", klog.KObj(secret), err))
	}
	return nil
}
