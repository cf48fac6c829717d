package konnect

import (
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	"github.com/almproject/alm/test/konnectsim"
)

// createIn creates obj in namespace ns.
func (e *env) createIn(ns string, obj client.Object) {
	e.t.Helper()
	obj.SetNamespace(ns)
	if err := e.c.Create(e.ctx, obj); err != nil {
		e.t.Fatalf("creating %T %s/%s: %v", obj, ns, obj.GetName(), err)
	}
}

// readyControlPlaneIn creates a control plane name (with its auth configuration) in namespace ns and waits until
// it is Programmed.
func (e *env) readyControlPlaneIn(ns, name string) *konnectv1alpha2.KonnectGatewayControlPlane {
	e.t.Helper()
	e.createIn(ns, authConfig(name+"-auth", e.sim.URL()))
	e.createIn(ns, controlPlaneObj(name, name+"-auth"))
	cp := &konnectv1alpha2.KonnectGatewayControlPlane{}
	e.eventually(time.Minute, "control plane "+ns+"/"+name+" Programmed", func() error {
		if err := e.c.Get(e.ctx, types.NamespacedName{Namespace: ns, Name: name}, cp); err != nil {
			return err
		}
		if cp.Status.ID == "" {
			return fmt.Errorf("no Konnect ID yet")
		}
		return nil
	})
	return cp
}

// grantObj lets kind from namespace from reference the KonnectGatewayControlPlanes of the grant's namespace.
func grantObj(name, kind, from string) *configurationv1alpha1.KongReferenceGrant {
	return &configurationv1alpha1.KongReferenceGrant{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: configurationv1alpha1.KongReferenceGrantSpec{
		From: []configurationv1alpha1.ReferenceGrantFrom{{Group: "configuration.konghq.com", Kind: kind, Namespace: from}},
		To:   []configurationv1alpha1.ReferenceGrantTo{{Group: "konnect.konghq.com", Kind: "KonnectGatewayControlPlane"}},
	}}
}

// serviceCalls is the number of requests the simulator answered on service endpoints.
func serviceCalls(sim *konnectsim.Server) int64 {
	var n int64
	for k, v := range sim.Counters() {
		if strings.Contains(k, "/services") {
			n += v
		}
	}
	return n
}

// A KongService naming a control plane in another namespace: without a KongReferenceGrant there it reports the
// missing grant and Konnect is not called; a grant makes it Programmed; removing the grant reports it again (the
// service stays in Konnect, as in Kong's operator: updates stop, nothing is rolled back); deleting the object then
// still deletes the service from Konnect, through the ID it knows, and its finalizer goes.
func TestReferenceGrantControlPlane(t *testing.T) {
	e := newEnv(t, envOptions{otherNamespace: true})
	cp := e.readyControlPlaneIn(e.other, "shared")
	before := serviceCalls(e.sim)

	svc := serviceObj("svc", "shared", "example.com")
	svc.Spec.ControlPlaneRef.KonnectNamespacedRef.Namespace = e.other
	e.create(svc)
	cond := e.waitCondition(&configurationv1alpha1.KongService{}, "svc", konnectv1alpha1.ConditionControlPlaneRefValid, metav1.ConditionFalse, konnectv1alpha1.ReasonRefNotPermitted, time.Minute)
	want := fmt.Sprintf("no KongReferenceGrant in namespace %s allows configuration.konghq.com KongService from namespace %s to KonnectGatewayControlPlane %s/shared", e.other, e.ns, e.other)
	if !strings.Contains(cond.Message, want) {
		t.Errorf("ControlPlaneRefValid message %q, want it to contain %q", cond.Message, want)
	}
	e.waitCondition(&configurationv1alpha1.KongService{}, "svc", konnectv1alpha1.ConditionProgrammed, metav1.ConditionFalse, konnectv1alpha1.ReasonInvalidReference, time.Minute)
	if n := serviceCalls(e.sim) - before; n != 0 {
		t.Errorf("%d requests to service endpoints without a grant, want 0", n)
	}

	e.createIn(e.other, grantObj("services-from-ns", "KongService", e.ns))
	e.waitProgrammed(&configurationv1alpha1.KongService{}, "svc")
	if err := e.get(svc, "svc"); err != nil {
		t.Fatal(err)
	}
	if got := e.simByUID(konnectsim.KindService, svc.UID); len(got) != 1 || svc.Status.Konnect.ControlPlaneID != cp.Status.ID {
		t.Fatalf("%d services in Konnect for the KongService (control plane %s), want 1 in %s", len(got), svc.Status.Konnect.ControlPlaneID, cp.Status.ID)
	}

	grant := &configurationv1alpha1.KongReferenceGrant{ObjectMeta: metav1.ObjectMeta{Name: "services-from-ns", Namespace: e.other}}
	if err := e.c.Delete(e.ctx, grant); err != nil {
		t.Fatal(err)
	}
	e.waitCondition(&configurationv1alpha1.KongService{}, "svc", konnectv1alpha1.ConditionControlPlaneRefValid, metav1.ConditionFalse, konnectv1alpha1.ReasonRefNotPermitted, time.Minute)
	if got := e.simByUID(konnectsim.KindService, svc.UID); len(got) != 1 {
		t.Errorf("%d services in Konnect after the grant went, want 1 (kept until the object is deleted)", len(got))
	}

	if err := e.c.Delete(e.ctx, svc); err != nil {
		t.Fatal(err)
	}
	e.eventually(time.Minute, "KongService deleted (finalizer removed)", func() error {
		if err := e.get(&configurationv1alpha1.KongService{}, "svc"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%w)", err)
		}
		return nil
	})
	if got := e.simByUID(konnectsim.KindService, svc.UID); len(got) != 0 {
		t.Errorf("%d services left in Konnect after the KongService was deleted, want 0", len(got))
	}
}

// A KongVault is cluster-scoped: its control plane is always in another namespace, so it needs a grant there (from
// namespace ""), and no vault is created without one.
func TestReferenceGrantVault(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.readyControlPlane("cp")
	v := e.vaultObj("granted", "cp")
	if err := e.c.Create(e.ctx, v); err != nil {
		t.Fatal(err)
	}
	vault := &configurationv1alpha1.KongVault{}
	e.eventually(time.Minute, "KongVault reports the missing grant", func() error {
		if err := e.c.Get(e.ctx, types.NamespacedName{Name: v.Name}, vault); err != nil {
			return err
		}
		for _, c := range vault.Status.Conditions {
			if c.Type == konnectv1alpha1.ConditionControlPlaneRefValid && c.Reason == konnectv1alpha1.ReasonRefNotPermitted {
				return nil
			}
		}
		return fmt.Errorf("conditions %v", vault.Status.Conditions)
	})
	if got := e.simByUID(konnectsim.KindVault, vault.UID); len(got) != 0 {
		t.Fatalf("%d vaults in Konnect without a grant, want 0", len(got))
	}
	e.create(grantObj("vaults", "KongVault", ""))
	e.eventually(time.Minute, "KongVault Programmed once granted", func() error {
		if err := e.c.Get(e.ctx, types.NamespacedName{Name: v.Name}, vault); err != nil {
			return err
		}
		if len(e.simByUID(konnectsim.KindVault, vault.UID)) != 1 {
			return fmt.Errorf("not in Konnect; conditions %v", vault.Status.Conditions)
		}
		return nil
	})
}
