package konnect

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/test/konnectsim"
)

// Adoption (spec.adopt): an entity that exists in Konnect is taken over by its ID instead of created.

// konnectService creates a service in Konnect as a team would have before using the operator (through the API,
// not the operator) and returns its ID.
func (e *env) konnectService(cpID string, body map[string]any) string {
	e.t.Helper()
	data, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(e.ctx, http.MethodPost, e.sim.URL()+"/v2/control-planes/"+cpID+"/core-entities/services", bytes.NewReader(data))
	req.Header.Set("Authorization", "Bearer "+konnectsim.DefaultToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var created struct {
		ID string `json:"id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&created); err != nil || resp.StatusCode != http.StatusCreated || created.ID == "" {
		e.t.Fatalf("creating a service in Konnect: %d %v %+v", resp.StatusCode, err, created)
	}
	return created.ID
}

func adoptingService(name, cp, host, id string, mode configurationv1alpha1.AdoptMode) *configurationv1alpha1.KongService {
	svc := serviceObj(name, cp, host)
	svc.Spec.Adopt = &configurationv1alpha1.AdoptOptions{From: configurationv1alpha1.AdoptSourceKonnect, Mode: mode,
		Konnect: &configurationv1alpha1.AdoptKonnectOptions{ID: id}}
	return svc
}

// serviceInKonnect is the service id as Konnect holds it.
func (e *env) serviceInKonnect(id string) (konnectsim.Object, bool) {
	for _, o := range e.sim.ObjectsOf(konnectsim.KindService) {
		if o.ID == id {
			return o, true
		}
	}
	return konnectsim.Object{}, false
}

// Override: the object takes the entity over with its ID, makes it equal to the spec and tags it; no entity is
// created; deleting the object deletes the entity.
func TestAdoptOverride(t *testing.T) {
	e := newEnv(t, envOptions{})
	cp := e.readyControlPlane("cp")
	id := e.konnectService(cp.Status.ID, map[string]any{"name": "legacy", "host": "old.example.com", "port": 80})
	posts := count(e.sim, http.MethodPost, konnectsim.PathServices)
	e.create(adoptingService("legacy", "cp", "new.example.com", id, configurationv1alpha1.AdoptModeOverride))
	svc := &configurationv1alpha1.KongService{}
	e.waitProgrammed(svc, "legacy")
	if svc.Status.Konnect == nil || svc.Status.Konnect.ID != id {
		t.Fatalf("status.konnect %+v, want the adopted ID %s", svc.Status.Konnect, id)
	}
	got, ok := e.serviceInKonnect(id)
	if !ok || got.JSON["host"] != "new.example.com" || !slices.Contains(got.Tags, "k8s-uid:"+string(svc.UID)) {
		t.Errorf("the adopted service in Konnect: %+v, want host new.example.com and the object's k8s-uid tag", got)
	}
	if n := count(e.sim, http.MethodPost, konnectsim.PathServices) - posts; n != 0 {
		t.Errorf("%d services created, want 0: the existing one is adopted", n)
	}
	if len(e.sim.ObjectsOf(konnectsim.KindService)) != 1 {
		t.Errorf("services in Konnect: %+v, want only the adopted one", e.sim.ObjectsOf(konnectsim.KindService))
	}
	if err := e.c.Delete(e.ctx, svc); err != nil {
		t.Fatal(err)
	}
	e.waitGone(svc, "legacy")
	if _, ok := e.serviceInKonnect(id); ok {
		t.Errorf("the adopted service %s is still in Konnect after its object was deleted", id)
	}
}

// Match: an entity equal to the spec is taken over unchanged; one that differs is not, the object says in which
// fields, and nothing is written to Konnect.
func TestAdoptMatch(t *testing.T) {
	e := newEnv(t, envOptions{})
	cp := e.readyControlPlane("cp")
	same := e.konnectService(cp.Status.ID, map[string]any{"name": "same", "host": "same.example.com", "port": 80})
	other := e.konnectService(cp.Status.ID, map[string]any{"name": "other", "host": "elsewhere.example.com", "port": 8080})

	e.create(adoptingService("same", "cp", "same.example.com", same, configurationv1alpha1.AdoptModeMatch))
	svc := &configurationv1alpha1.KongService{}
	e.waitProgrammed(svc, "same")
	if svc.Status.Konnect == nil || svc.Status.Konnect.ID != same {
		t.Fatalf("status.konnect %+v, want the adopted ID %s", svc.Status.Konnect, same)
	}

	puts := count(e.sim, http.MethodPut, konnectsim.PathService)
	e.create(adoptingService("other", "cp", "other.example.com", other, configurationv1alpha1.AdoptModeMatch))
	c := e.waitCondition(&configurationv1alpha1.KongService{}, "other", konnectv1alpha1.ConditionProgrammed, metav1.ConditionFalse,
		konnectv1alpha1.ReasonAdoptionMismatch, 30*time.Second)
	for _, want := range []string{other, "host", "port", "mode override"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("the mismatch does not name %q: %s", want, c.Message)
		}
	}
	time.Sleep(time.Second) // nothing may follow: a refused match waits for a change of the object
	if n := count(e.sim, http.MethodPut, konnectsim.PathService) - puts; n != 0 {
		t.Errorf("%d updates after a refused match, want 0", n)
	}
	if got, _ := e.serviceInKonnect(other); got.JSON["host"] != "elsewhere.example.com" {
		t.Errorf("the service that did not match was changed: %+v", got)
	}
}

// An ID that Konnect does not have is a failure that names it, and nothing is created.
func TestAdoptMissing(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.readyControlPlane("cp")
	const missing = "5a1e4c1a-0000-4000-8000-000000000000"
	e.create(adoptingService("ghost", "cp", "ghost.example.com", missing, configurationv1alpha1.AdoptModeOverride))
	c := e.waitCondition(&configurationv1alpha1.KongService{}, "ghost", konnectv1alpha1.ConditionProgrammed, metav1.ConditionFalse,
		konnectv1alpha1.ReasonAdoptionFailed, 30*time.Second)
	if !strings.Contains(c.Message, missing) {
		t.Errorf("the failure does not name the missing ID: %s", c.Message)
	}
	if n := len(e.sim.ObjectsOf(konnectsim.KindService)); n != 0 {
		t.Errorf("%d services in Konnect, want none", n)
	}
}
