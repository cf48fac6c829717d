package konnect

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/handoff"
	"github.com/almproject/alm/test/konnectsim"
)

// The hand-over of the Konnect operator's upgrade to tag scheme v2 (konnect-operator 1.3.0), against the simulator:
// the old version (scheme v1) runs and leads; the new version (scheme v2) starts beside it with the same leader
// Lease, so it never leads, and answers the hand-over ALM requested on its OperatorVersion (written here as ALM
// writes it) with status.handoff.completed once every entity carries the v2 tags.

var operatorVersionGVK = schema.GroupVersionKind{Group: "operators.alm.dev", Version: "v1alpha1", Kind: "OperatorVersion"}

// handoffWorld is the old version's objects, synced to Konnect under scheme v1.
type handoffWorld struct {
	ids     map[string]string // "<Kind> <name>" -> Konnect ID
	objects int
}

func (e *env) oldVersionObjects() handoffWorld {
	e.t.Helper()
	cp := e.readyControlPlane("cp")
	for _, name := range []string{"echo", "billing"} {
		e.create(serviceObj(name, "cp", name+".svc"))
		e.create(routeObj(name, name))
	}
	e.create(&configurationv1.KongConsumer{
		ObjectMeta: metav1.ObjectMeta{Name: "alice"}, Username: "alice",
		Spec: configurationv1.KongConsumerSpec{ControlPlaneRef: cpRef("cp")},
	})
	w := handoffWorld{ids: map[string]string{"KonnectGatewayControlPlane cp": cp.Status.ID}}
	for _, name := range []string{"echo", "billing"} {
		svc, route := &configurationv1alpha1.KongService{}, &configurationv1alpha1.KongRoute{}
		e.waitProgrammed(svc, name)
		e.waitProgrammed(route, name)
		w.ids["KongService "+name], w.ids["KongRoute "+name] = svc.Status.Konnect.ID, route.Status.Konnect.ID
	}
	consumer := &configurationv1.KongConsumer{}
	e.waitProgrammed(consumer, "alice")
	w.ids["KongConsumer alice"] = consumer.Status.Konnect.ID
	w.objects = len(w.ids)
	return w
}

// requestHandoff creates the new version's OperatorVersion with the hand-over requested, as ALM's Upgrade loop
// records it once the new version has Succeeded.
func (e *env) requestHandoff(name string) *handoff.Target {
	e.t.Helper()
	ov := &unstructured.Unstructured{}
	ov.SetGroupVersionKind(operatorVersionGVK)
	ov.SetNamespace(e.ns)
	ov.SetName(name)
	ov.Object["spec"] = map[string]any{"packageName": "konnect-operator", "version": "1.3.0", "replaces": "konnect-operator.v1.2.0",
		"install": map[string]any{"strategy": "deployment", "spec": map[string]any{"deployments": []any{}}}}
	if err := e.c.Create(e.ctx, ov); err != nil {
		e.t.Fatal(err)
	}
	ov.Object["status"] = map[string]any{"phase": "Succeeded", "handoff": map[string]any{
		"from": "konnect-operator.v1.2.0", "requestedAt": time.Now().UTC().Format(time.RFC3339),
		"objects": []any{"Deployment " + e.ns + "/konnect-operator"},
	}}
	if err := e.c.Status().Update(e.ctx, ov); err != nil {
		e.t.Fatal(err)
	}
	return &handoff.Target{Namespace: e.ns, Name: name}
}

// waitAnswer waits until the operator answered the hand-over on its OperatorVersion and returns the answer.
func (e *env) waitAnswer(name string, timeout time.Duration) map[string]any {
	e.t.Helper()
	var answer map[string]any
	e.eventually(timeout, "the hand-over answered on OperatorVersion "+name, func() error {
		ov := &unstructured.Unstructured{}
		ov.SetGroupVersionKind(operatorVersionGVK)
		if err := e.get(ov, name); err != nil {
			return err
		}
		h, _, _ := unstructured.NestedMap(ov.Object, "status", "handoff")
		if h["completed"] != true && h["failed"] == nil {
			return fmt.Errorf("status.handoff = %v", h)
		}
		answer = h
		return nil
	})
	return answer
}

// simIdentity is every entity of the test in the simulator: "<Kind> <name>" -> ID, and the IDs lacking scheme v2's
// tags.
func (e *env) simIdentity() (map[string]string, []string) {
	ids, lacking := map[string]string{}, []string{}
	for _, kind := range []konnectsim.Kind{konnectsim.KindControlPlane, konnectsim.KindService, konnectsim.KindRoute, konnectsim.KindConsumer} {
		for _, o := range e.simObjects(kind) {
			tags := o.Tags
			for k, v := range o.Labels {
				tags = append(tags, k+":"+v)
			}
			ids[entity.TagValue(tags, entity.TagKind)+" "+entity.TagValue(tags, entity.TagName)] = o.ID
			if entity.TagValue(tags, entity.TagGroup) == "" || entity.TagValue(tags, entity.TagVersion) == "" {
				lacking = append(lacking, string(kind)+" "+o.ID)
			}
		}
	}
	return ids, lacking
}

// creates counts the simulator's creates of the test's kinds.
func creates(sim *konnectsim.Server) int64 {
	return count(sim, "POST", konnectsim.PathControlPlanes) + count(sim, "POST", konnectsim.PathServices) +
		count(sim, "POST", konnectsim.PathRoutes) + count(sim, "POST", konnectsim.PathServiceRoutes) + count(sim, "POST", konnectsim.PathConsumers)
}

// updates counts the simulator's updates of the test's kinds.
func updates(sim *konnectsim.Server) int64 {
	return count(sim, "PATCH", konnectsim.PathControlPlane) + count(sim, "PUT", konnectsim.PathService) +
		count(sim, "PUT", konnectsim.PathRoute) + count(sim, "PUT", konnectsim.PathConsumer)
}

// TestHandoffRetagsInPlace: the new version re-tags every entity the old one created, in place (same IDs, nothing
// created, one update each), without being leader, and answers completed; the old version, still running, keeps
// the new tags: its drift scans (every second) find nothing to correct, so nothing flip-flops.
func TestHandoffRetagsInPlace(t *testing.T) {
	e := newEnv(t, envOptions{syncPeriod: time.Second, leaderElect: true})
	w := e.oldVersionObjects()
	before, lacking := e.simIdentity()
	if len(before) != w.objects || len(lacking) != w.objects {
		t.Fatalf("before the hand-over: %d entities (%d without v2 tags), want %d under scheme v1: %v", len(before), len(lacking), w.objects, before)
	}
	created, updated := creates(e.sim), updates(e.sim)

	target := e.requestHandoff("konnect-operator.v1.3.0")
	stopNew := e.runOperator(envOptions{syncPeriod: time.Second, leaderElect: true, tagScheme: entity.TagSchemeV2, handoff: target})
	defer stopNew()
	answer := e.waitAnswer(target.Name, 30*time.Second)
	if answer["completed"] != true {
		t.Fatalf("hand-over answered %v, want completed", answer)
	}
	after, lacking := e.simIdentity()
	if fmt.Sprint(after) != fmt.Sprint(w.ids) || len(lacking) > 0 {
		t.Errorf("after the hand-over: entities %v (without v2 tags: %v), want the same IDs %v, all re-tagged", after, lacking, w.ids)
	}
	if got := creates(e.sim) - created; got != 0 {
		t.Errorf("the hand-over created %d entities, want none (re-tagged in place)", got)
	}
	if got := updates(e.sim) - updated; got != int64(w.objects) {
		t.Errorf("the hand-over made %d updates, want %d (one per entity: the new version is not leader, its loops wait)", got, w.objects)
	}

	// No flip-flop: two more drift scans of the old version (each lists the services) change nothing.
	updated, lists := updates(e.sim), count(e.sim, "GET", konnectsim.PathServices)
	e.eventually(20*time.Second, "two drift scans of the old version", func() error {
		if n := count(e.sim, "GET", konnectsim.PathServices) - lists; n < 2 {
			return fmt.Errorf("%d service lists since the hand-over", n)
		}
		return nil
	})
	if got := updates(e.sim) - updated; got != 0 {
		t.Errorf("the old version made %d updates after the hand-over, want none: it must keep the v2 tags", got)
	}
	if _, lacking := e.simIdentity(); len(lacking) > 0 {
		t.Errorf("after the old version's drift scans, entities without v2 tags: %v", lacking)
	}
}

// TestHandoffFailsOnKonnectErrors: Konnect refusing the updates (500, every attempt) fails the hand-over with the
// reason, after the retries; nothing is created and the old version keeps everything as it was.
func TestHandoffFailsOnKonnectErrors(t *testing.T) {
	e := newEnv(t, envOptions{leaderElect: true})
	w := e.oldVersionObjects()
	created := creates(e.sim)
	e.sim.AddFault(konnectsim.FaultRule{Method: "PUT", Path: konnectsim.PathService, Status: 500})

	target := e.requestHandoff("konnect-operator.v1.3.0")
	stopNew := e.runOperator(envOptions{leaderElect: true, tagScheme: entity.TagSchemeV2, handoff: target})
	defer stopNew()
	answer := e.waitAnswer(target.Name, 30*time.Second)
	failed, _ := answer["failed"].(string)
	if answer["completed"] == true || !strings.Contains(failed, "after 3 attempts") || !strings.Contains(failed, "HTTP 500") {
		t.Fatalf("hand-over answered %v, want failed after 3 attempts with Konnect's HTTP 500", answer)
	}
	t.Logf("status.handoff.failed: %s", failed)
	if got := creates(e.sim) - created; got != 0 {
		t.Errorf("a failed hand-over created %d entities", got)
	}
	after, _ := e.simIdentity()
	if fmt.Sprint(after) != fmt.Sprint(w.ids) {
		t.Errorf("after a failed hand-over: entities %v, want %v", after, w.ids)
	}
	cp := &konnectv1alpha2.KonnectGatewayControlPlane{}
	if err := e.get(cp, "cp"); err != nil || !slices.ContainsFunc(cp.Status.Conditions, func(c metav1.Condition) bool { return c.Status == metav1.ConditionTrue }) {
		t.Errorf("control plane after a failed hand-over: %v %+v", err, cp.Status.Conditions)
	}
}
