package konnect

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	configurationv1beta1 "github.com/almproject/alm/apis/configuration/v1beta1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	"github.com/almproject/alm/test/konnectsim"
)

func consumerGroupObj(name, cp string) *configurationv1beta1.KongConsumerGroup {
	return &configurationv1beta1.KongConsumerGroup{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       configurationv1beta1.KongConsumerGroupSpec{Name: name, ControlPlaneRef: cpRef(cp)},
	}
}

func consumerObj(name, cp string, groups ...string) *configurationv1.KongConsumer {
	return &configurationv1.KongConsumer{
		ObjectMeta: metav1.ObjectMeta{Name: name}, Username: name, ConsumerGroups: groups,
		Spec: configurationv1.KongConsumerSpec{ControlPlaneRef: cpRef(cp)},
	}
}

// groupIDs returns the Konnect IDs of the named KongConsumerGroups.
func (e *env) groupIDs(names ...string) []string {
	e.t.Helper()
	var ids []string
	for _, n := range names {
		g := &configurationv1beta1.KongConsumerGroup{}
		if err := e.get(g, n); err != nil || g.Status.Konnect == nil {
			e.t.Fatalf("group %s: %v", n, err)
		}
		ids = append(ids, g.Status.Konnect.ID)
	}
	return ids
}

// A consumer's consumerGroups are its memberships: one named before its group exists waits for it, and one dropped
// is left at once (the sync period is an hour: the consumer's change does it, not a periodic check).
func TestConsumerGroupMemberships(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.readyControlPlane("cp")
	e.create(consumerGroupObj("gold", "cp"))
	kc := consumerObj("alice", "cp", "gold", "silver")
	e.create(kc)
	c := e.waitCondition(kc, "alice", konnectv1alpha1.ConditionKongConsumerGroupRefsValid, metav1.ConditionFalse, konnectv1alpha1.ReasonInvalidReference, 30*time.Second)
	t.Logf("waiting for silver: %s", c.Message)
	e.waitCondition(kc, "alice", konnectv1alpha1.ConditionProgrammed, metav1.ConditionFalse, konnectv1alpha1.ReasonInvalidReference, 30*time.Second)

	e.create(consumerGroupObj("silver", "cp"))
	e.waitProgrammed(kc, "alice")
	ids := e.groupIDs("gold", "silver")
	member := func(groupID string) bool { return slices.Contains(e.sim.GroupConsumers(groupID), kc.Status.Konnect.ID) }
	e.eventually(10*time.Second, "alice in gold and silver", func() error {
		if !member(ids[0]) || !member(ids[1]) {
			return fmt.Errorf("gold %v silver %v", e.sim.GroupConsumers(ids[0]), e.sim.GroupConsumers(ids[1]))
		}
		return nil
	})

	e.mutate(kc, "alice", func() { kc.ConsumerGroups = []string{"gold"} })
	e.eventually(10*time.Second, "alice left silver", func() error {
		if member(ids[1]) || !member(ids[0]) {
			return fmt.Errorf("gold %v silver %v", e.sim.GroupConsumers(ids[0]), e.sim.GroupConsumers(ids[1]))
		}
		return nil
	})
}

// A membership removed in Konnect is restored within a sync period by one list of the group's consumers; the
// consumers' own memberships are not listed in steady state.
func TestConsumerGroupMembershipDrift(t *testing.T) {
	const period = 2 * time.Second
	e := newEnv(t, envOptions{syncPeriod: period})
	e.readyControlPlane("cp")
	e.create(consumerGroupObj("gold", "cp"))
	kc := consumerObj("alice", "cp", "gold")
	e.create(kc)
	e.waitProgrammed(kc, "alice")
	gold := e.groupIDs("gold")[0]
	e.eventually(10*time.Second, "alice in gold", func() error {
		if !slices.Contains(e.sim.GroupConsumers(gold), kc.Status.Konnect.ID) {
			return fmt.Errorf("gold %v", e.sim.GroupConsumers(gold))
		}
		return nil
	})
	ofConsumer := count(e.sim, http.MethodGet, konnectsim.PathConsumerConsumerGroups)
	if _, err := e.sdk().Consumers.RemoveConsumerFromAllConsumerGroups(e.ctx, kc.Status.Konnect.ControlPlaneID, kc.Status.Konnect.ID); err != nil {
		t.Fatal(err)
	}
	e.eventually(period+5*time.Second, "membership restored", func() error {
		if !slices.Contains(e.sim.GroupConsumers(gold), kc.Status.Konnect.ID) {
			return fmt.Errorf("gold %v", e.sim.GroupConsumers(gold))
		}
		return nil
	})
	if n := count(e.sim, http.MethodGet, konnectsim.PathConsumerConsumerGroups) - ofConsumer; n != 0 {
		t.Errorf("%d lists of alice's groups in steady state, want 0 (memberships are checked per group)", n)
	}
}

// Deleting consumers and groups in either order leaves nothing in Konnect and nothing stuck.
func TestConsumerGroupDeletionOrders(t *testing.T) {
	for _, tc := range []struct {
		name  string
		order []string
	}{
		{"group first", []string{"group", "consumer", "controlplane", "auth"}},
		{"consumer first", []string{"consumer", "group", "controlplane", "auth"}},
		{"control plane first", []string{"controlplane", "group", "consumer", "auth"}},
		{"auth config first", []string{"auth", "group", "consumer", "controlplane"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{})
			e.readyControlPlane("cp")
			e.create(consumerGroupObj("gold", "cp"))
			e.create(consumerObj("alice", "cp", "gold"))
			e.waitProgrammed(&configurationv1.KongConsumer{}, "alice")
			objs := map[string]client.Object{
				"group":        &configurationv1beta1.KongConsumerGroup{ObjectMeta: metav1.ObjectMeta{Name: "gold"}},
				"consumer":     &configurationv1.KongConsumer{ObjectMeta: metav1.ObjectMeta{Name: "alice"}},
				"controlplane": &konnectv1alpha2.KonnectGatewayControlPlane{ObjectMeta: metav1.ObjectMeta{Name: "cp"}},
				"auth":         &konnectv1alpha1.KonnectAPIAuthConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "cp-auth"}},
			}
			entityOf := map[string]konnectsim.Kind{"group": konnectsim.KindConsumerGroup, "consumer": konnectsim.KindConsumer}
			cpDeleted := false
			for _, what := range tc.order {
				obj := objs[what]
				if err := e.get(obj, obj.GetName()); err != nil {
					t.Fatal(err)
				}
				if err := e.c.Delete(e.ctx, obj); err != nil {
					t.Fatalf("deleting the %s: %v", what, err)
				}
				cpDeleted = cpDeleted || what == "controlplane"
				if kind, ok := entityOf[what]; ok && !cpDeleted {
					e.waitGone(obj, obj.GetName())
					if got := e.simByUID(kind, obj.GetUID()); len(got) != 0 {
						t.Errorf("the %s is gone but its %s is still in Konnect", what, kind)
					}
				}
			}
			e.eventually(30*time.Second, "every object gone", func() error {
				for _, what := range tc.order {
					if err := e.get(objs[what], objs[what].GetName()); !apierrors.IsNotFound(err) {
						return fmt.Errorf("the %s is still there (%w, finalizers %v)", what, err, objs[what].GetFinalizers())
					}
				}
				return nil
			})
			for _, kind := range []konnectsim.Kind{konnectsim.KindControlPlane, konnectsim.KindConsumer, konnectsim.KindConsumerGroup} {
				if got := e.simObjects(kind); len(got) != 0 {
					t.Errorf("%d %s left in Konnect", len(got), kind)
				}
			}
		})
	}
}

// Steady state with every kind (a control plane, services, routes, consumers in groups, plugins on each target
// kind and a global one): the calls per sync period are a few per control plane — one list per kind and one per
// consumer group — not one per entity.
func TestSteadyStateCallsWithPluginsAndGroups(t *testing.T) {
	const period = 2 * time.Second
	e := newEnv(t, envOptions{syncPeriod: period})
	e.readyControlPlane("cp")
	e.create(kongPlugin("limit", "rate-limiting", `{"minute": 5}`))
	e.create(consumerGroupObj("gold", "cp"))
	e.create(consumerGroupObj("silver", "cp"))
	var waits []client.Object
	for i := range 3 {
		svc, route, kc := fmt.Sprintf("svc-%d", i), fmt.Sprintf("route-%d", i), fmt.Sprintf("consumer-%d", i)
		e.create(serviceObj(svc, "cp", "example.com"))
		e.create(routeObj(route, svc))
		e.create(consumerObj(kc, "cp", "gold", "silver"))
		for name, targets := range map[string]*configurationv1alpha1.KongPluginBindingTargets{
			"svc": {ServiceReference: &configurationv1alpha1.TargetRefWithGroupKind{Name: svc, Kind: "KongService", Group: "configuration.konghq.com"}},
			"rt":  {RouteReference: &configurationv1alpha1.TargetRefWithGroupKind{Name: route, Kind: "KongRoute", Group: "configuration.konghq.com"}},
			"kc":  {ConsumerReference: &configurationv1alpha1.TargetRef{Name: kc}},
		} {
			b := &configurationv1alpha1.KongPluginBinding{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("limit-%s-%d", name, i)},
				Spec: configurationv1alpha1.KongPluginBindingSpec{PluginReference: configurationv1alpha1.PluginRef{Name: "limit"}, Targets: targets}}
			e.create(b)
			waits = append(waits, b)
		}
		waits = append(waits, &configurationv1.KongConsumer{ObjectMeta: metav1.ObjectMeta{Name: kc}})
	}
	global := &configurationv1alpha1.KongPluginBinding{ObjectMeta: metav1.ObjectMeta{Name: "global"}, Spec: configurationv1alpha1.KongPluginBindingSpec{
		PluginReference: configurationv1alpha1.PluginRef{Name: "limit"}, ControlPlaneRef: cpRef("cp"), Scope: configurationv1alpha1.KongPluginBindingScopeGlobalInControlPlane}}
	e.create(global)
	waits = append(waits, global)
	for _, o := range waits {
		e.waitProgrammed(o, o.GetName())
	}
	// Two scans to settle (creates happened within the first period), then three measured periods.
	scans := func() int64 { return count(e.sim, http.MethodGet, konnectsim.PathPlugins) }
	start := scans()
	e.eventually(5*period, "two scans", func() error {
		if scans() < start+2 {
			return fmt.Errorf("%d scans", scans()-start)
		}
		return nil
	})
	before, first := e.sim.Counters(), scans()
	e.eventually(6*period, "three measured scans", func() error {
		if scans() < first+3 {
			return fmt.Errorf("%d scans", scans()-first)
		}
		return nil
	})
	after := e.sim.Counters()
	var total int64
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			total += d
			t.Logf("%-100s %d", k, d)
		}
	}
	perPeriod := float64(total) / 3
	t.Logf("%d Konnect calls in 3 sync periods (%.1f per period) for 1 control plane, 3 services, 3 routes, 3 consumers in 2 groups, 10 plugins", total, perPeriod)
	// One list per kind (control planes, services, routes, consumers, consumer groups, plugins), one per group and
	// the auth configuration's token check: 9, and one more for the timing of the scans in the window.
	if perPeriod > 10 {
		t.Errorf("%.1f calls per sync period, want at most 10", perPeriod)
	}
	for k, v := range after {
		if d := v - before[k]; d > 0 && (k[:3] == "PUT" || k[:4] == "POST" || k[:6] == "DELETE") {
			t.Errorf("%d %s in steady state", d, k)
		}
	}
}
