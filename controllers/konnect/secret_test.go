package konnect

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	"github.com/almproject/alm/controllers/konnect/authconfig"
	"github.com/almproject/alm/test/konnectsim"
)

// Deleting the token Secret first (or with everything, as deleting a namespace does) must not orphan the control
// plane and its entities in Konnect: the Secret is kept until its auth configuration is gone.
func TestTokenSecretKeptUntilEntitiesAreDeleted(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createSecretAuth("auth", "konnect-token")
	e.create(controlPlaneObj("cp", "auth"))
	e.create(serviceObj("svc", "cp", "example.com"))
	e.waitProgrammed(&configurationv1alpha1.KongService{}, "svc")
	secret := &corev1.Secret{}
	e.eventually(30*time.Second, "Secret held by the auth configuration", func() error {
		if err := e.get(secret, "konnect-token"); err != nil {
			return err
		}
		if !controllerutil.ContainsFinalizer(secret, authconfig.FinalizerTokenInUse) {
			return fmt.Errorf("finalizers %v", secret.Finalizers)
		}
		return nil
	})

	// The Secret goes first; the rest follows.
	for _, obj := range []client.Object{secret, &configurationv1alpha1.KongService{}, &konnectv1alpha2.KonnectGatewayControlPlane{}, &konnectv1alpha1.KonnectAPIAuthConfiguration{}} {
		if obj == secret {
			if err := e.c.Delete(e.ctx, secret); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := e.c.DeleteAllOf(e.ctx, obj, client.InNamespace(e.ns)); err != nil {
			t.Fatal(err)
		}
	}
	e.eventually(30*time.Second, "everything deleted, the Secret last", func() error {
		if err := e.get(&corev1.Secret{}, "konnect-token"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("Secret: %w", err)
		}
		auths := &konnectv1alpha1.KonnectAPIAuthConfigurationList{}
		cps := &konnectv1alpha2.KonnectGatewayControlPlaneList{}
		svcs := &configurationv1alpha1.KongServiceList{}
		for _, l := range []client.ObjectList{auths, cps, svcs} {
			if err := e.c.List(e.ctx, l, client.InNamespace(e.ns)); err != nil {
				return err
			}
		}
		if n := len(auths.Items) + len(cps.Items) + len(svcs.Items); n > 0 {
			return fmt.Errorf("%d objects left", n)
		}
		return nil
	})
	for _, kind := range []konnectsim.Kind{konnectsim.KindControlPlane, konnectsim.KindService} {
		if left := e.simObjects(kind); len(left) != 0 {
			t.Errorf("%d %s entities left in Konnect", len(left), kind)
		}
	}
}
