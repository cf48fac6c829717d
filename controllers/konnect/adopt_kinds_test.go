package konnect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	"github.com/almproject/alm/test/konnectsim"
)

// konnectCreate creates an entity in Konnect as a team would have before using the operator (POST path, relative
// to the simulator's URL) and returns its ID.
func (e *env) konnectCreate(path string, body map[string]any) string {
	e.t.Helper()
	data, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(e.ctx, http.MethodPost, e.sim.URL()+path, bytes.NewReader(data))
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
		e.t.Fatalf("creating %s in Konnect: %d %v %+v", path, resp.StatusCode, err, created)
	}
	return created.ID
}

func adopt(id string, mode configurationv1alpha1.AdoptMode) *configurationv1alpha1.AdoptOptions {
	return &configurationv1alpha1.AdoptOptions{From: configurationv1alpha1.AdoptSourceKonnect, Mode: mode,
		Konnect: &configurationv1alpha1.AdoptKonnectOptions{ID: id}}
}

// simObject is the entity id of kind as Konnect holds it.
func (e *env) simObject(kind konnectsim.Kind, id string) (konnectsim.Object, bool) {
	for _, o := range e.sim.ObjectsOf(kind) {
		if o.ID == id {
			return o, true
		}
	}
	return konnectsim.Object{}, false
}

// spec.adopt on the kinds of upstreams, TLS material, keys and vaults works as on services: override takes the
// entity over (same ID, made equal to the spec, the object's identity tags, nothing created) and deletes it with the
// object; match refuses an entity that differs and names the fields, writing nothing.
func TestAdoptGatewayKinds(t *testing.T) {
	e := newEnv(t, envOptions{})
	cp := e.readyControlPlane("cp")
	cpPath := "/v2/control-planes/" + cp.Status.ID + "/core-entities/"

	upID := e.konnectCreate(cpPath+"upstreams", map[string]any{"name": "legacy.internal", "slots": 100})
	up := upstreamObj("legacy", "cp")
	up.Spec.Slots = ptrTo(int64(200))
	up.Spec.Adopt = adopt(upID, configurationv1alpha1.AdoptModeOverride)
	posts := count(e.sim, http.MethodPost, konnectsim.PathUpstreams)
	e.create(up)
	e.waitProgrammed(up, "legacy")
	if up.Status.Konnect == nil || up.Status.Konnect.ID != upID {
		t.Fatalf("status.konnect %+v, want the adopted ID %s", up.Status.Konnect, upID)
	}
	got, ok := e.simObject(konnectsim.KindUpstream, upID)
	if !ok || fmt.Sprint(got.JSON["slots"]) != "200" || !slices.Contains(got.Tags, "k8s-uid:"+string(up.UID)) {
		t.Errorf("the adopted upstream in Konnect: %+v, want slots 200 and the object's k8s-uid tag", got)
	}
	if n := count(e.sim, http.MethodPost, konnectsim.PathUpstreams) - posts; n != 0 {
		t.Errorf("%d upstreams created, want 0: the existing one is adopted", n)
	}

	setID := e.konnectCreate(cpPath+"key-sets", map[string]any{"name": "other-name"})
	set := keySetObj("ks", "cp")
	set.Spec.Adopt = adopt(setID, configurationv1alpha1.AdoptModeMatch)
	e.create(set)
	c := e.waitCondition(&configurationv1alpha1.KongKeySet{}, "ks", konnectv1alpha1.ConditionProgrammed, metav1.ConditionFalse,
		konnectv1alpha1.ReasonAdoptionMismatch, time.Minute)
	if !strings.Contains(c.Message, setID) || !strings.Contains(c.Message, "name") {
		t.Errorf("the mismatch does not name the key set and the field name: %s", c.Message)
	}
	if got, _ := e.simObject(konnectsim.KindKeySet, setID); got.JSON["name"] != "other-name" {
		t.Errorf("the key set that did not match was changed: %+v", got)
	}

	if err := e.c.Delete(e.ctx, up); err != nil {
		t.Fatal(err)
	}
	e.waitGone(up, "legacy")
	if _, ok := e.simObject(konnectsim.KindUpstream, upID); ok {
		t.Errorf("the adopted upstream %s is still in Konnect after its object was deleted", upID)
	}
}

// spec.adopt on a KonnectGatewayControlPlane takes an existing control plane over (override: its labels become the
// spec's, it gets the object's identity labels) instead of creating one.
func TestAdoptControlPlane(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.konnectCreate(konnectsim.PathControlPlanes, map[string]any{"name": "legacy", "labels": map[string]any{"team": "old"}})
	e.create(authConfig("auth", e.sim.URL()))
	cp := controlPlaneObj("legacy", "auth")
	cp.Spec.Adopt = adopt(id, configurationv1alpha1.AdoptModeOverride)
	posts := count(e.sim, http.MethodPost, konnectsim.PathControlPlanes)
	e.create(cp)
	var got client.Object = &konnectv1alpha2.KonnectGatewayControlPlane{}
	e.waitProgrammed(got, "legacy")
	adopted := got.(*konnectv1alpha2.KonnectGatewayControlPlane)
	if adopted.Status.ID != id {
		t.Fatalf("status.id %q, want the adopted ID %s", adopted.Status.ID, id)
	}
	o, ok := e.simObject(konnectsim.KindControlPlane, id)
	if !ok || o.Labels["team"] != "a" || o.Labels["k8s-uid"] != string(adopted.UID) {
		t.Errorf("the adopted control plane in Konnect: %+v, want label team=a and the object's k8s-uid", o)
	}
	if n := count(e.sim, http.MethodPost, konnectsim.PathControlPlanes) - posts; n != 0 {
		t.Errorf("%d control planes created, want 0: the existing one is adopted", n)
	}
}
