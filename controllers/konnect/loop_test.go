package konnect

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/test/konnectsim"
)

// Flowchart: created -> references valid -> create -> success -> ID, OrgID, ServerURL and conditions.
func TestCreateSucceeds(t *testing.T) {
	e := newEnv(t, envOptions{})
	// The token comes from a Secret here; the other tests put it in the spec.
	e.createSecretAuth("auth", "konnect-token")
	e.create(controlPlaneObj("cp", "auth"))
	e.create(serviceObj("svc", "cp", "example.com"))
	e.create(routeObj("route", "svc"))
	e.create(&configurationv1.KongConsumer{
		ObjectMeta: metav1.ObjectMeta{Name: "consumer"}, Username: "alice",
		Spec: configurationv1.KongConsumerSpec{ControlPlaneRef: cpRef("cp")},
	})

	auth := &konnectv1alpha1.KonnectAPIAuthConfiguration{}
	e.waitCondition(auth, "auth", konnectv1alpha1.ConditionAPIAuthValid, metav1.ConditionTrue, konnectv1alpha1.ReasonValid, 30*time.Second)
	orgID := e.sim.OrganizationID(konnectsim.DefaultToken)
	if auth.Status.OrganizationID != orgID || auth.Status.ServerURL != e.sim.URL() {
		t.Errorf("auth status = %+v, want organization %s at %s", auth.Status, orgID, e.sim.URL())
	}

	cpObj := &konnectv1alpha2.KonnectGatewayControlPlane{}
	e.waitProgrammed(cpObj, "cp")
	svc := &configurationv1alpha1.KongService{}
	e.waitProgrammed(svc, "svc")
	route := &configurationv1alpha1.KongRoute{}
	e.waitProgrammed(route, "route")
	consumer := &configurationv1.KongConsumer{}
	e.waitProgrammed(consumer, "consumer")

	if cpObj.Status.ID == "" || cpObj.Status.OrgID != orgID || cpObj.Status.ServerURL != e.sim.URL() {
		t.Errorf("control plane status = %+v", cpObj.Status)
	}
	for name, k := range map[string]*configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef{
		"service": svc.Status.Konnect, "route": &route.Status.Konnect.KonnectEntityStatusWithControlPlaneRef, "consumer": consumer.Status.Konnect,
	} {
		if k.ID == "" || k.ControlPlaneID != cpObj.Status.ID || k.OrgID != orgID || k.ServerURL != e.sim.URL() {
			t.Errorf("%s status.konnect = %+v", name, k)
		}
	}
	if route.Status.Konnect.ServiceID != svc.Status.Konnect.ID {
		t.Errorf("route serviceID = %s, want %s", route.Status.Konnect.ServiceID, svc.Status.Konnect.ID)
	}

	// What Konnect holds: the declared fields and the Kubernetes identity.
	cps := e.simByUID(konnectsim.KindControlPlane, cpObj.UID)
	if len(cps) != 1 || cps[0].ID != cpObj.Status.ID || cps[0].Labels["team"] != "a" || cps[0].Labels[entity.TagKind] != "KonnectGatewayControlPlane" {
		t.Errorf("control planes in Konnect = %+v", cps)
	}
	svcs := e.simByUID(konnectsim.KindService, svc.UID)
	if len(svcs) != 1 || svcs[0].JSON["host"] != "example.com" || svcs[0].ID != svc.Status.Konnect.ID {
		t.Fatalf("services in Konnect = %+v", svcs)
	}
	wantTags := map[string]bool{"k8s-kind:KongService": true, "k8s-name:svc": true, "k8s-namespace:" + e.ns: true, "k8s-uid:" + string(svc.UID): true}
	for _, tag := range svcs[0].Tags {
		delete(wantTags, tag)
	}
	if len(wantTags) != 0 {
		t.Errorf("service tags %v lack %v", svcs[0].Tags, wantTags)
	}
	if rs := e.simByUID(konnectsim.KindRoute, route.UID); len(rs) != 1 {
		t.Errorf("routes in Konnect = %+v", rs)
	}
	if cs := e.simByUID(konnectsim.KindConsumer, consumer.UID); len(cs) != 1 || cs[0].JSON["username"] != "alice" {
		t.Errorf("consumers in Konnect = %+v", cs)
	}
}

// Flowchart: create -> not successful -> failure condition -> reconciliation start again.
func TestCreateFails(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.readyControlPlane("cp")
	e.sim.AddFault(konnectsim.FaultRule{Method: http.MethodPost, Path: konnectsim.PathServices, Status: http.StatusInternalServerError})
	e.create(serviceObj("svc", "cp", "example.com"))
	svc := &configurationv1alpha1.KongService{}
	c := e.waitCondition(svc, "svc", konnectv1alpha1.ConditionProgrammed, metav1.ConditionFalse, konnectv1alpha1.ReasonCreateFailed, 30*time.Second)
	t.Logf("while Konnect fails: %s", c.Message)
	if svc.Status.Konnect != nil && svc.Status.Konnect.ID != "" {
		t.Errorf("a failed create recorded ID %s", svc.Status.Konnect.ID)
	}
	e.sim.ClearFaults()
	e.waitProgrammed(svc, "svc")
	if n := len(e.simByUID(konnectsim.KindService, svc.UID)); n != 1 {
		t.Errorf("%d services in Konnect, want 1", n)
	}
}

// Flowchart: references not valid -> failure condition, no API call; and the object is created as soon as the
// reference becomes valid, not after the sync period (an hour here).
func TestInvalidReference(t *testing.T) {
	e := newEnv(t, envOptions{syncPeriod: time.Hour})
	e.create(serviceObj("svc", "cp", "example.com"))
	e.create(routeObj("route", "svc"))
	svc := &configurationv1alpha1.KongService{}
	c := e.waitCondition(svc, "svc", konnectv1alpha1.ConditionControlPlaneRefValid, metav1.ConditionFalse, konnectv1alpha1.ReasonInvalidReference, 30*time.Second)
	if want := fmt.Sprintf("KonnectGatewayControlPlane %s/cp not found", e.ns); c.Message != want {
		t.Errorf("message %q, want %q", c.Message, want)
	}
	e.waitCondition(svc, "svc", konnectv1alpha1.ConditionProgrammed, metav1.ConditionFalse, konnectv1alpha1.ReasonInvalidReference, 5*time.Second)
	route := &configurationv1alpha1.KongRoute{}
	e.waitCondition(route, "route", konnectv1alpha1.ConditionKongServiceRefValid, metav1.ConditionFalse, konnectv1alpha1.ReasonInvalidReference, 30*time.Second)

	// The control plane exists but its auth configuration does not: still invalid, still no call.
	e.create(controlPlaneObj("cp", "auth"))
	cpObj := &konnectv1alpha2.KonnectGatewayControlPlane{}
	e.waitCondition(cpObj, "cp", konnectv1alpha1.ConditionAPIAuthRefValid, metav1.ConditionFalse, konnectv1alpha1.ReasonInvalidReference, 30*time.Second)
	if n := e.sim.TotalRequests(); n != 0 {
		t.Errorf("%d Konnect calls with invalid references, want 0: %v", n, e.sim.Counters())
	}

	start := time.Now()
	e.create(authConfig("auth", e.sim.URL()))
	e.waitProgrammed(cpObj, "cp")
	e.waitProgrammed(svc, "svc")
	e.waitProgrammed(route, "route")
	t.Logf("references resolved and everything Programmed %s after the auth configuration appeared", time.Since(start).Round(time.Millisecond))
	for _, typ := range []string{konnectv1alpha1.ConditionControlPlaneRefValid, konnectv1alpha1.ConditionAPIAuthRefValid} {
		e.waitCondition(svc, "svc", typ, metav1.ConditionTrue, konnectv1alpha1.ReasonValid, time.Second)
	}
}

// Flowchart: updated -> spec, labels or annotations changed -> update -> success.
func TestUpdateOnChange(t *testing.T) {
	e := newEnv(t, envOptions{syncPeriod: time.Hour})
	e.readyControlPlane("cp")
	e.create(serviceObj("svc", "cp", "example.com"))
	svc := &configurationv1alpha1.KongService{}
	e.waitProgrammed(svc, "svc")
	id := svc.Status.Konnect.ID

	e.mutate(svc, "svc", func() { svc.Spec.Host = "changed.example.com" })
	e.eventually(10*time.Second, "host updated in Konnect", func() error {
		if got := e.simByUID(konnectsim.KindService, svc.UID); len(got) != 1 || got[0].JSON["host"] != "changed.example.com" || got[0].ID != id {
			return fmt.Errorf("services in Konnect: %+v", got)
		}
		return nil
	})

	// A label edit counts as a change too (unlike in Kong's operator).
	puts := count(e.sim, http.MethodPut, konnectsim.PathService)
	e.mutate(svc, "svc", func() { svc.Labels = map[string]string{"edited": "yes"} })
	e.eventually(10*time.Second, "label edit sent to Konnect", func() error {
		if n := count(e.sim, http.MethodPut, konnectsim.PathService); n <= puts {
			return fmt.Errorf("%d updates", n)
		}
		return nil
	})
	e.waitProgrammed(svc, "svc")

	// A control plane is updated with a PATCH.
	cpObj := &konnectv1alpha2.KonnectGatewayControlPlane{}
	e.mutate(cpObj, "cp", func() {
		cpObj.Spec.CreateControlPlaneRequest.Description = ptrTo("edited")
		cpObj.Spec.CreateControlPlaneRequest.Labels = map[string]string{"team": "b"}
	})
	e.eventually(10*time.Second, "control plane updated in Konnect", func() error {
		got := e.simByUID(konnectsim.KindControlPlane, cpObj.UID)
		if len(got) != 1 || got[0].JSON["description"] != "edited" || got[0].Labels["team"] != "b" {
			return fmt.Errorf("control planes in Konnect: %+v", got)
		}
		return nil
	})
}

// Flowchart: update -> not successful -> failure condition; recovers when Konnect does.
func TestUpdateFails(t *testing.T) {
	e := newEnv(t, envOptions{syncPeriod: time.Hour})
	e.readyControlPlane("cp")
	e.create(serviceObj("svc", "cp", "example.com"))
	svc := &configurationv1alpha1.KongService{}
	e.waitProgrammed(svc, "svc")

	e.sim.AddFault(konnectsim.FaultRule{Method: http.MethodPut, Path: konnectsim.PathService, Status: http.StatusServiceUnavailable})
	e.mutate(svc, "svc", func() { svc.Spec.Port = 8080 })
	e.waitCondition(svc, "svc", konnectv1alpha1.ConditionProgrammed, metav1.ConditionFalse, konnectv1alpha1.ReasonUpdateFailed, 30*time.Second)
	e.sim.ClearFaults()
	e.waitProgrammed(svc, "svc")
	if got := e.simByUID(konnectsim.KindService, svc.UID); len(got) != 1 || fmt.Sprint(got[0].JSON["port"]) != "8080" {
		t.Errorf("services in Konnect: %+v", got)
	}
}

// Flowchart: not changed -> sync period not passed -> wait; sync period passed -> update (the seed's literal,
// per-object mode).
func TestUnchangedPerObjectMode(t *testing.T) {
	const period = 2 * time.Second
	e := newEnv(t, envOptions{syncPeriod: period, mode: entity.DriftModeUpdate})
	e.readyControlPlane("cp")
	e.create(serviceObj("svc", "cp", "example.com"))
	svc := &configurationv1alpha1.KongService{}
	e.waitProgrammed(svc, "svc")
	created := svc.Status.LastSyncTime.Time
	if n := count(e.sim, http.MethodPut, konnectsim.PathService); n != 0 {
		t.Fatalf("%d updates right after the create, want 0 before the sync period", n)
	}
	e.eventually(3*period, "periodic update", func() error {
		if n := count(e.sim, http.MethodPut, konnectsim.PathService); n == 0 {
			return fmt.Errorf("no update yet")
		}
		return nil
	})
	if err := e.get(svc, "svc"); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(created); waited < period-100*time.Millisecond {
		t.Errorf("updated %s after the create, before the sync period %s", waited, period)
	}
	e.eventually(3*period, "lastSyncTime moves with the periodic update", func() error {
		if err := e.get(svc, "svc"); err != nil {
			return err
		}
		if !svc.Status.LastSyncTime.After(created) {
			return fmt.Errorf("lastSyncTime still %s", svc.Status.LastSyncTime)
		}
		return nil
	})
}

// Flowchart: not changed, sync period passed, drift detection by list (the default): Konnect is checked with list
// calls and nothing is updated when nothing drifted.
func TestUnchangedListMode(t *testing.T) {
	const period = 2 * time.Second
	e := newEnv(t, envOptions{syncPeriod: period})
	e.readyControlPlane("cp")
	for i := range 3 {
		e.create(serviceObj(fmt.Sprintf("svc-%d", i), "cp", "example.com"))
	}
	for i := range 3 {
		e.waitProgrammed(&configurationv1alpha1.KongService{}, fmt.Sprintf("svc-%d", i))
	}
	lists := count(e.sim, http.MethodGet, konnectsim.PathServices)
	e.eventually(4*period, "two drift scans", func() error {
		if n := count(e.sim, http.MethodGet, konnectsim.PathServices); n < lists+2 {
			return fmt.Errorf("%d list calls", n-lists)
		}
		return nil
	})
	if n := count(e.sim, http.MethodPut, konnectsim.PathService); n != 0 {
		t.Errorf("%d updates without drift, want 0", n)
	}
}

// Drift: an out-of-band edit (as in the UI) is overwritten within one sync period, and only the drifted entity
// is updated.
func TestDriftOverwritten(t *testing.T) {
	const period = 2 * time.Second
	e := newEnv(t, envOptions{syncPeriod: period})
	e.readyControlPlane("cp")
	for i := range 5 {
		e.create(serviceObj(fmt.Sprintf("svc-%d", i), "cp", "example.com"))
	}
	svc := &configurationv1alpha1.KongService{}
	for i := range 5 {
		e.waitProgrammed(svc, fmt.Sprintf("svc-%d", i))
	}
	puts := count(e.sim, http.MethodPut, konnectsim.PathService)
	if err := e.sim.Edit(svc.Status.Konnect.ID, map[string]any{"host": "edited-in-the-ui.example.com", "tags": []any{"ui"}}); err != nil {
		t.Fatal(err)
	}
	edited := time.Now()
	e.eventually(period+3*time.Second, "drift overwritten", func() error {
		got := e.simByUID(konnectsim.KindService, svc.UID)
		if len(got) != 1 || got[0].JSON["host"] != "example.com" {
			return fmt.Errorf("services in Konnect: %+v", got)
		}
		return nil
	})
	t.Logf("drift overwritten %s after the edit (sync period %s)", time.Since(edited).Round(time.Millisecond), period)
	if n := count(e.sim, http.MethodPut, konnectsim.PathService) - puts; n != 1 {
		t.Errorf("%d updates, want 1 (only the drifted service)", n)
	}

	// An entity deleted in the UI comes back with the same ID.
	if err := e.sim.Remove(svc.Status.Konnect.ID); err != nil {
		t.Fatal(err)
	}
	e.eventually(period+3*time.Second, "deleted entity restored", func() error {
		if got := e.simByUID(konnectsim.KindService, svc.UID); len(got) != 1 || got[0].ID != svc.Status.Konnect.ID {
			return fmt.Errorf("services in Konnect: %+v", got)
		}
		return nil
	})
}

// A create whose response is lost (committed, answered 502) is found by its tag and adopted: no duplicate.
func TestLostResponseCreate(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.readyControlPlane("cp")
	e.sim.LoseNext(http.MethodPost, konnectsim.PathServices, 1)
	e.sim.LoseNext(http.MethodPost, konnectsim.PathRoutes, 1)
	svc := serviceObj("svc", "cp", "example.com")
	svc.Spec.Name = nil // no unique name to save us: only the tag can
	e.create(svc)
	e.create(routeObj("route", "svc"))
	e.waitProgrammed(svc, "svc")
	route := &configurationv1alpha1.KongRoute{}
	e.waitProgrammed(route, "route")
	if got := e.simByUID(konnectsim.KindService, svc.UID); len(got) != 1 || got[0].ID != svc.Status.Konnect.ID {
		t.Errorf("services in Konnect: %+v, want exactly the one in status (%s)", got, svc.Status.Konnect.ID)
	}
	if got := e.simByUID(konnectsim.KindRoute, route.UID); len(got) != 1 {
		t.Errorf("routes in Konnect: %+v, want 1", got)
	}
	if n := count(e.sim, http.MethodPost, konnectsim.PathServices); n != 1 {
		t.Errorf("%d service creates, want 1 (the lost one, then adoption)", n)
	}
}

// Flowchart: deleted -> delete -> success -> the object is removed.
func TestDeleteSucceeds(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.readyControlPlane("cp")
	e.create(serviceObj("svc", "cp", "example.com"))
	svc := &configurationv1alpha1.KongService{}
	e.waitProgrammed(svc, "svc")
	if err := e.c.Delete(e.ctx, svc); err != nil {
		t.Fatal(err)
	}
	e.eventually(10*time.Second, "object gone", func() error {
		if err := e.get(svc, "svc"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%w)", err)
		}
		return nil
	})
	if got := e.simByUID(konnectsim.KindService, svc.UID); len(got) != 0 {
		t.Errorf("services left in Konnect: %+v", got)
	}
}

// Flowchart: delete -> not successful -> failure condition, the finalizer stays; a 404 counts as deleted.
func TestDeleteFails(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.readyControlPlane("cp")
	e.create(serviceObj("svc", "cp", "example.com"))
	e.create(serviceObj("gone", "cp", "example.com"))
	svc := &configurationv1alpha1.KongService{}
	e.waitProgrammed(svc, "svc")
	gone := &configurationv1alpha1.KongService{}
	e.waitProgrammed(gone, "gone")

	e.sim.AddFault(konnectsim.FaultRule{Method: http.MethodDelete, Path: konnectsim.PathService, Status: http.StatusInternalServerError})
	if err := e.c.Delete(e.ctx, svc); err != nil {
		t.Fatal(err)
	}
	e.waitCondition(svc, "svc", konnectv1alpha1.ConditionProgrammed, metav1.ConditionFalse, konnectv1alpha1.ReasonDeleteFailed, 30*time.Second)
	if len(svc.Finalizers) == 0 {
		t.Error("the finalizer was removed although Konnect did not delete")
	}
	e.sim.ClearFaults()
	e.eventually(30*time.Second, "object gone once Konnect deletes", func() error {
		if err := e.get(svc, "svc"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%w)", err)
		}
		return nil
	})
	if got := e.simByUID(konnectsim.KindService, svc.UID); len(got) != 0 {
		t.Errorf("services left in Konnect: %+v", got)
	}

	// Already deleted in Konnect (404): the object goes.
	if err := e.sim.Remove(gone.Status.Konnect.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Delete(e.ctx, gone); err != nil {
		t.Fatal(err)
	}
	e.eventually(10*time.Second, "object gone after a 404", func() error {
		if err := e.get(gone, "gone"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%w)", err)
		}
		return nil
	})
}

// Deleting parents (auth configuration, control plane) first never leaves children stuck on their finalizer.
func TestParentsDeletedFirst(t *testing.T) {
	e := newEnv(t, envOptions{})
	cpObj := e.readyControlPlane("cp")
	e.create(serviceObj("svc", "cp", "example.com"))
	e.create(routeObj("route", "svc"))
	e.waitProgrammed(&configurationv1alpha1.KongRoute{}, "route")

	if err := e.c.Delete(e.ctx, cpObj); err != nil {
		t.Fatal(err)
	}
	e.eventually(10*time.Second, "control plane gone", func() error {
		if err := e.get(&konnectv1alpha2.KonnectGatewayControlPlane{}, "cp"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%w)", err)
		}
		return nil
	})
	if err := e.c.Delete(e.ctx, &konnectv1alpha1.KonnectAPIAuthConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "cp-auth", Namespace: e.ns}}); err != nil {
		t.Fatal(err)
	}
	for _, obj := range []client.Object{&configurationv1alpha1.KongService{ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: e.ns}}, &configurationv1alpha1.KongRoute{ObjectMeta: metav1.ObjectMeta{Name: "route", Namespace: e.ns}}} {
		if err := e.c.Delete(e.ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	e.eventually(10*time.Second, "children gone", func() error {
		if err := e.get(&configurationv1alpha1.KongService{}, "svc"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("service still there (%w)", err)
		}
		if err := e.get(&configurationv1alpha1.KongRoute{}, "route"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("route still there (%w)", err)
		}
		return nil
	})
	if n := len(e.simObjects(konnectsim.KindControlPlane)) + len(e.simObjects(konnectsim.KindService)) + len(e.simObjects(konnectsim.KindRoute)); n != 0 {
		t.Errorf("%d objects left in Konnect", n)
	}
}

// Deleting the auth configuration first (as a namespace deletion may) waits for its control planes, which still
// delete their Konnect entities through it: nothing is left orphaned in Konnect.
func TestAuthConfigDeletedFirst(t *testing.T) {
	e := newEnv(t, envOptions{})
	cpObj := e.readyControlPlane("cp")
	e.create(serviceObj("svc", "cp", "example.com"))
	e.waitProgrammed(&configurationv1alpha1.KongService{}, "svc")

	auth := &konnectv1alpha1.KonnectAPIAuthConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "cp-auth", Namespace: e.ns}}
	if err := e.c.Delete(e.ctx, auth); err != nil {
		t.Fatal(err)
	}
	if err := e.get(&konnectv1alpha1.KonnectAPIAuthConfiguration{}, "cp-auth"); err != nil {
		t.Fatalf("the auth configuration went while a control plane uses it: %v", err)
	}
	for _, obj := range []client.Object{&configurationv1alpha1.KongService{ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: e.ns}}, cpObj} {
		if err := e.c.Delete(e.ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	e.eventually(20*time.Second, "everything gone", func() error {
		if err := e.get(&configurationv1alpha1.KongService{}, "svc"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("service still there (%w)", err)
		}
		if err := e.get(&konnectv1alpha2.KonnectGatewayControlPlane{}, "cp"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("control plane still there (%w)", err)
		}
		if err := e.get(&konnectv1alpha1.KonnectAPIAuthConfiguration{}, "cp-auth"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("auth configuration still there (%w)", err)
		}
		return nil
	})
	if n := len(e.simObjects(konnectsim.KindControlPlane)) + len(e.simObjects(konnectsim.KindService)); n != 0 {
		t.Errorf("%d objects left in Konnect", n)
	}
}
