package konnect

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/test/konnectsim"
)

// TestFaultRun: 500 entities (250 services, 250 routes) under 10% 5xx, 5% lost responses and 429s all
// end Programmed with no duplicate in Konnect, and once every object is deleted Konnect holds none of them.
func TestFaultRun(t *testing.T) {
	if testing.Short() {
		t.Skip("fault run skipped with -short")
	}
	n := 250
	if v := os.Getenv("KONNECT_FAULT_N"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	e := newEnv(t, envOptions{syncPeriod: 5 * time.Second, workers: 16, sim: konnectsim.Options{Seed: 42}})
	e.readyControlPlane("cp")
	e.sim.SetErrorRate(0.10)
	e.sim.SetLostResponseRate(0.05)
	// 429s: a server-side rate limit of 200 requests/s (burst 50), and ten bursts, 3s apart, in which the next 20
	// requests are answered 429 with Retry-After: 1s whatever the rate. (Endless count-based bursts would starve the
	// last few objects: they would receive every throttled answer.)
	e.sim.SetRateLimit(200, 50)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(3 * time.Second)
		defer tick.Stop()
		for range 10 {
			select {
			case <-stop:
				return
			case <-tick.C:
				e.sim.Throttle("", 20, time.Second)
			}
		}
	}()

	start := time.Now()
	for i := range n {
		e.create(serviceObj(fmt.Sprintf("svc-%d", i), "cp", "example.com"))
		e.create(routeObj(fmt.Sprintf("route-%d", i), fmt.Sprintf("svc-%d", i)))
	}
	e.eventually(3*time.Minute, "all Programmed", func() error {
		notReady := 0
		var sample []string
		svcs := &configurationv1alpha1.KongServiceList{}
		routes := &configurationv1alpha1.KongRouteList{}
		if err := e.c.List(e.ctx, svcs, client.InNamespace(e.ns)); err != nil {
			return err
		}
		if err := e.c.List(e.ctx, routes, client.InNamespace(e.ns)); err != nil {
			return err
		}
		for _, s := range svcs.Items {
			if !programmed(s.Status.Conditions) {
				notReady++
				sample = append(sample, fmt.Sprintf("%s: %v", s.Name, s.Status.Conditions))
			}
		}
		for _, r := range routes.Items {
			if !programmed(r.Status.Conditions) {
				notReady++
				sample = append(sample, fmt.Sprintf("%s: %v", r.Name, r.Status.Conditions))
			}
		}
		if notReady > 0 {
			return fmt.Errorf("%d of %d not Programmed: %v", notReady, 2*n, sample[:min(len(sample), 5)])
		}
		return nil
	})
	t.Logf("%d entities Programmed in %s under faults; %d requests: %v", 2*n, time.Since(start).Round(time.Millisecond), e.sim.TotalRequests(), e.sim.Counters())

	for _, kind := range []konnectsim.Kind{konnectsim.KindService, konnectsim.KindRoute} {
		seen := map[string]int{}
		for _, o := range e.simObjects(kind) {
			for _, tag := range o.Tags {
				if len(tag) > len(entity.TagUID)+1 && tag[:len(entity.TagUID)+1] == entity.TagUID+":" {
					seen[tag]++
				}
			}
		}
		if len(seen) != n {
			t.Errorf("%s: %d distinct objects in Konnect, want %d", kind, len(seen), n)
		}
		for uid, c := range seen {
			if c != 1 {
				t.Errorf("%s %s: %d copies in Konnect", kind, uid, c)
			}
		}
	}

	// Delete everything, still under faults.
	for _, obj := range []client.Object{&configurationv1alpha1.KongRoute{}, &configurationv1alpha1.KongService{}, &konnectv1alpha2.KonnectGatewayControlPlane{}} {
		if err := e.c.DeleteAllOf(e.ctx, obj, client.InNamespace(e.ns)); err != nil {
			t.Fatal(err)
		}
	}
	e.eventually(3*time.Minute, "all objects deleted", func() error {
		svcs := &configurationv1alpha1.KongServiceList{}
		routes := &configurationv1alpha1.KongRouteList{}
		cps := &konnectv1alpha2.KonnectGatewayControlPlaneList{}
		for _, l := range []client.ObjectList{svcs, routes, cps} {
			if err := e.c.List(e.ctx, l, client.InNamespace(e.ns)); err != nil {
				return err
			}
		}
		if left := len(svcs.Items) + len(routes.Items) + len(cps.Items); left > 0 {
			return fmt.Errorf("%d objects left", left)
		}
		return nil
	})
	for _, kind := range []konnectsim.Kind{konnectsim.KindControlPlane, konnectsim.KindService, konnectsim.KindRoute} {
		if left := e.simObjects(kind); len(left) != 0 {
			t.Errorf("%d %s entities left in Konnect", len(left), kind)
		}
	}
}

func programmed(conds []metav1.Condition) bool {
	for _, c := range conds {
		if c.Type == konnectv1alpha1.ConditionProgrammed {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}
