package konnectapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/almproject/alm/test/konnectsim"
)

// budgetSim starts a simulator with a control plane, returns an API of its organization through a gate with the
// given ceiling (requests per second, 0: none) and the control plane's ID.
func budgetSim(t *testing.T, opts konnectsim.Options, ceiling float64) (*konnectsim.Server, API, string) {
	t.Helper()
	sim := konnectsim.StartTest(t, opts)
	api := newSDKAPI(sim.URL(), konnectsim.DefaultToken, newGates(ceiling).get("org"), sim.HTTPClient())
	cp, err := api.Create(t.Context(), TypeControlPlane, "", map[string]any{"name": "budget"})
	if err != nil {
		t.Fatal(err)
	}
	return sim, api, cp.ID
}

// Konnect's budget, read from its answers, is never overspent: 100 requests from 8 workers against 30 per 1s
// window (with no ceiling of our own) end without a 429, paced over the windows they need.
func TestBudgetFromHeadersAvoids429(t *testing.T) {
	const budget, window = 30, time.Second
	sim, api, cp := budgetSim(t, konnectsim.Options{Budget: budget, BudgetWindow: window}, 0)
	const requests, workers = 100, 8
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, requests)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < requests; i += workers {
				if _, err := api.List(t.Context(), TypeService, cp, ""); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("request failed: %v", err)
	}
	took := time.Since(start)
	injected := sim.Injected()
	t.Logf("%d requests in %s against %d per %s; 429 answers: %d", requests, took.Round(10*time.Millisecond), budget, window, injected.Throttled)
	if injected.Throttled != 0 {
		t.Errorf("%d answers were 429 (%d over budget), want none", injected.Throttled, injected.OverBudget)
	}
	// The first window may be nearly over: the requests span at least ceil(requests/budget)-2 whole windows.
	if floor := window * time.Duration((requests+budget-1)/budget-2); took < floor {
		t.Errorf("%d requests took %s, under the %s the budget allows: was it read?", requests, took, floor)
	}
}

// While requests wait for the organization's budget, deletes and creates go first, then updates, then reads: 5
// deletes queued behind 40 reads (20 per second, 20 at once) are all served before the last 10 reads.
func TestBudgetServesByPriority(t *testing.T) {
	var mu sync.Mutex
	var order []string
	_, api, cp := budgetSim(t, konnectsim.Options{Logf: func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case strings.Contains(line, " DELETE "):
			order = append(order, http.MethodDelete)
		case strings.Contains(line, " GET ") && strings.Contains(line, "/services"):
			order = append(order, http.MethodGet)
		}
	}}, 20)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() { _, _ = api.List(ctx, TypeService, cp, "") })
	}
	time.Sleep(100 * time.Millisecond) // the reads are queued at 20 per second: most still wait
	for i := range 5 {
		wg.Go(func() { _ = api.Delete(ctx, TypeService, cp, fmt.Sprintf("00000000-0000-0000-0000-00000000000%d", i)) })
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("order at the simulator: %s", strings.Join(order, " "))
	lastDelete := -1
	for i, m := range order {
		if m == http.MethodDelete {
			lastDelete = i
		}
	}
	if n := strings.Count(strings.Join(order, " "), http.MethodDelete); n != 5 {
		t.Fatalf("%d deletes reached the simulator, want 5", n)
	}
	if after := len(order) - 1 - lastDelete; after < 10 {
		t.Errorf("only %d reads were served after the last delete, want at least 10: deletes did not go first", after)
	}
}
