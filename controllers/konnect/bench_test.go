package konnect

import (
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/test/konnectsim"
)

// BenchmarkSync: 1,000 KongServices and 1,000 KongRoutes against the simulator with 20ms latency per request.
// Reported: seconds from the start of the operator, with the 2,000 objects declared, until all are Programmed
// (s-to-programmed), Konnect calls per entity at creation, and Konnect calls per sync period in steady state without
// drift and with 1% of the entities edited out of band.
//
//	go test -run '^$' -bench BenchmarkSync -benchtime 1x ./controllers/konnect/
//
// KONNECT_BENCH_WORKERS sets the workers per kind (default 16). The seed's literal per-object mode
// (--drift-detection=update) is measured too with KONNECT_BENCH_ALL_MODES=1;
// it takes several minutes more (every object is updated and its status written every period).
func BenchmarkSync(b *testing.B) {
	modes := []entity.DriftMode{entity.DriftModeList}
	if os.Getenv("KONNECT_BENCH_ALL_MODES") != "" {
		modes = append(modes, entity.DriftModeUpdate)
	}
	for _, mode := range modes {
		b.Run(string(mode), func(b *testing.B) {
			for range b.N {
				benchmarkSync(b, mode)
			}
		})
	}
}

func benchmarkSync(b *testing.B, mode entity.DriftMode) {
	const (
		n      = 1000
		period = 20 * time.Second
	)
	workers := 16
	if v := os.Getenv("KONNECT_BENCH_WORKERS"); v != "" {
		if _, err := fmt.Sscan(v, &workers); err != nil {
			b.Fatalf("KONNECT_BENCH_WORKERS=%q: %v", v, err)
		}
	}
	e := newEnv(b, envOptions{syncPeriod: period, mode: mode, workers: workers, sim: konnectsim.Options{Latency: 20 * time.Millisecond}})
	e.readyControlPlane("cp")

	// The clock measures the operator, not this client: the objects are declared while the operator is stopped
	// (declaring 2,000 objects one at a time took 26s on a busy 2-core machine, and the operator kept up with it),
	// then it starts with all of them to create.
	e.stopOperator()
	declare := time.Now()
	parallel(16, n, func(i int) {
		e.createAsync(serviceObj(fmt.Sprintf("svc-%d", i), "cp", "example.com"))
		e.createAsync(routeObj(fmt.Sprintf("route-%d", i), fmt.Sprintf("svc-%d", i)))
	})
	created := time.Since(declare)
	e.sim.ResetCounters()
	start := time.Now()
	e.startOperator()
	e.eventually(10*time.Minute, "all Programmed", func() error {
		if left := notProgrammed(e); left > 0 {
			return fmt.Errorf("%d of %d not Programmed", left, 2*n)
		}
		return nil
	})
	took := time.Since(start)
	createCalls := e.sim.TotalRequests()
	b.ReportMetric(took.Seconds(), "s-to-programmed")
	b.ReportMetric(float64(createCalls)/(2*n), "calls/entity-at-create")

	// Steady state: count the calls of two whole sync periods.
	e.sim.ResetCounters()
	waitFor(2 * period)
	steady := float64(e.sim.TotalRequests()) / 2
	b.ReportMetric(steady, "calls/period-steady")
	b.Logf("%s mode: %d objects declared in Kubernetes (operator stopped) in %s", mode, 2*n, created.Round(time.Millisecond))
	b.Logf("%s mode: %d entities Programmed in %s, %d calls (%.2f per entity); steady state %.0f calls per %s period: %v",
		mode, 2*n, took.Round(time.Millisecond), createCalls, float64(createCalls)/(2*n), steady, period, e.sim.Counters())

	// 1% drift: 10 services and 10 routes edited in the UI, then two sync periods.
	svcs := &configurationv1alpha1.KongServiceList{}
	routes := &configurationv1alpha1.KongRouteList{}
	if err := e.c.List(e.ctx, svcs, client.InNamespace(e.ns)); err != nil {
		b.Fatal(err)
	}
	if err := e.c.List(e.ctx, routes, client.InNamespace(e.ns)); err != nil {
		b.Fatal(err)
	}
	e.sim.ResetCounters()
	for i := range n / 100 {
		if err := e.sim.Edit(svcs.Items[i].Status.Konnect.ID, map[string]any{"host": "edited.example.com"}); err != nil {
			b.Fatal(err)
		}
		if err := e.sim.Edit(routes.Items[i].Status.Konnect.ID, map[string]any{"paths": []any{"/edited"}}); err != nil {
			b.Fatal(err)
		}
	}
	waitFor(2 * period)
	drift := float64(e.sim.TotalRequests()) / 2
	b.ReportMetric(drift, "calls/period-1%drift")
	edited := 0
	for _, o := range e.simObjects(konnectsim.KindService) {
		if o.JSON["host"] == "edited.example.com" {
			edited++
		}
	}
	if edited != 0 {
		b.Errorf("%d edited services not restored after two sync periods", edited)
	}
	b.Logf("%s mode, 1%% drift: %.0f calls per period: %v", mode, drift, e.sim.Counters())
}

// createAsync is create for goroutines other than the test's own: a failure is reported, the test goes on.
func (e *env) createAsync(obj client.Object) {
	obj.SetNamespace(e.ns)
	if err := e.c.Create(e.ctx, obj); err != nil {
		e.t.Errorf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// parallel calls f(0..n-1) from workers goroutines and returns when all calls returned.
func parallel(workers, n int, f func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// waitFor lets the operator run for d (the measurement window of a benchmark, not a synchronisation).
func waitFor(d time.Duration) { <-time.After(d) }

func notProgrammed(e *env) int {
	svcs := &configurationv1alpha1.KongServiceList{}
	routes := &configurationv1alpha1.KongRouteList{}
	if err := e.c.List(e.ctx, svcs, client.InNamespace(e.ns)); err != nil {
		return -1
	}
	if err := e.c.List(e.ctx, routes, client.InNamespace(e.ns)); err != nil {
		return -1
	}
	left := 0
	for _, s := range svcs.Items {
		if !programmed(s.Status.Conditions) {
			left++
		}
	}
	for _, r := range routes.Items {
		if !programmed(r.Status.Conditions) {
			left++
		}
	}
	return left
}
