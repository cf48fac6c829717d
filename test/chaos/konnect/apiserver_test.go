package konnect

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/almproject/alm/test/chaos"
	"github.com/almproject/alm/test/konnectsim"
)

// apiServerBound is how soon after kube-apiserver answers again a phase must be done: the operator's cache resumes
// within seconds (package outage), a failed reconcile is retried within 10s and an object that waits on the cluster
// is rechecked every 10s (entity.Recheck), so 30s leaves room for one of each on a loaded machine.
const apiServerBound = 30 * time.Second

// TestKonnectAPIServerRestarted: the Konnect operator, as one process for all runs (each in a namespace of its
// own), creates 500 entities (as TestKonnectChaos,
// against a simulator that answers every request, 50ms each, within its rate limit) and kube-apiserver is restarted
// when a seeded random share (20% to 70%) of them exists in Konnect — while the objects are still being declared, if
// the operator keeps pace; then everything is deleted and kube-apiserver is restarted again when a share of the
// entities is gone from Konnect. Each phase must end — every entity Programmed, with exactly
// one entity per object in Konnect (by k8s-uid); every object gone, none left on a finalizer and nothing left in
// Konnect — within apiServerBound of kube-apiserver answering again. It runs 10 times (KONNECT_CHAOS_APISERVER_RUNS
// lowers it), seeds 1 to 10 (KONNECT_CHAOS_APISERVER_SEED shifts them).
func TestKonnectAPIServerRestarted(t *testing.T) {
	chaos.Require(t)
	runs, first := envInt(t, "KONNECT_CHAOS_APISERVER_RUNS", 10), uint64(envInt(t, "KONNECT_CHAOS_APISERVER_SEED", 1))
	bin := buildOperator(t)
	// One simulator and one operator process for every run, as one operator lives through many restarts of its
	// cluster's API server: the runs follow each other, so the restarts come every few seconds.
	shared := newScenarioWith(t, bin, "", first, konnectsim.Options{Seed: first, Latency: 50 * time.Millisecond, RateLimit: 200, RateLimitBurst: 50})
	row := chaos.Row{
		Scenario: fmt.Sprintf("Konnect operator: kube-apiserver restarted while it creates %d entities, and again while it deletes them "+
			"(the operator keeps running)", entities),
		Checks: "all Programmed, 0 duplicates in Konnect (by k8s-uid; by name where named), ids match; after delete: 0 entities in Konnect, " +
			"0 objects on a finalizer; each phase done within " + apiServerBound.String() + " of kube-apiserver answering again",
	}
	var after, outages []time.Duration
	var notes []string
	start := time.Now()
	for i := range uint64(runs) {
		seed := first + i
		var r restartResult
		row.Runs++
		if t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
			restartRun(shared.inNamespace(t, fmt.Sprintf("konnect-apiserver-%d", seed), seed), &r)
		}) {
			row.Converged++
			row.Slowest = max(row.Slowest, r.create.after, r.delete.after)
		}
		for _, p := range []phaseResult{r.create, r.delete} {
			if p.after > 0 {
				after = append(after, p.after)
				outages = append(outages, p.outage)
			}
		}
		notes = append(notes, fmt.Sprintf("seed %d: restarts with %d and %d entities in Konnect, done %s and %s after",
			seed, r.create.at, r.delete.at, r.create.after.Round(100*time.Millisecond), r.delete.after.Round(100*time.Millisecond)))
	}
	row.Notes = fmt.Sprintf("time from kube-apiserver answering again to the phase done: median %s, slowest %s; kube-apiserver away median %s; "+
		"the operator's cache resumes within seconds (package outage), a failed reconcile is retried within 10s, an object that waits "+
		"(its parent not Programmed, its status write not cached yet) is rechecked every 10s; %s; %s in all",
		median(after).Round(10*time.Millisecond), slowest(after).Round(10*time.Millisecond), median(outages).Round(100*time.Millisecond),
		strings.Join(notes, "; "), time.Since(start).Round(time.Second))
	chaos.Record(t, row)
}

// phaseResult is one phase of a run: how many entities Konnect held when kube-apiserver was restarted, how long
// it was away and how long the phase took after it answered again.
type phaseResult struct {
	at            int
	outage, after time.Duration
}

type restartResult struct{ create, delete phaseResult }

func restartRun(s *scenario, r *restartResult) {
	t := s.t
	share := 0.2 + 0.5*s.rnd.Float64()
	r.create = s.restartDuring("create", s.createAll, func(n int) bool { return n >= int(share*entities) }, s.programmed)
	for _, p := range s.duplicates() {
		t.Error(p)
	}
	share = 0.2 + 0.5*s.rnd.Float64()
	r.delete = s.restartDuring("delete", s.deleteAll, func(n int) bool { return n <= int((1-share)*entities) }, s.gone)
	s.checkNothingLeftInKonnect()
}

// restartDuring runs work (declaring or deleting the objects) and restarts kube-apiserver as soon as the number
// of entities in Konnect says the operator is that far (reached; a seeded random share of 20% to 70% of the work),
// which may be while work still writes (it retries what the restart refuses, as a client would). Then it waits
// until check reports all of the phase done: within apiServerBound of kube-apiserver answering again, or the run
// fails (it waits on for up to 3 minutes, to tell a slow phase from a stuck one).
func (s *scenario) restartDuring(name string, work func(), reached func(inKonnect int) bool, check func() (progress, error)) phaseResult {
	s.t.Helper()
	type restarted struct {
		res  phaseResult
		back time.Time
		err  error
	}
	done := make(chan restarted, 1)
	go func() {
		for !reached(len(s.sim.Objects())) {
			if s.ctx.Err() != nil {
				return // the run ended (failed) before: no restart behind the next run's back
			}
			time.Sleep(5 * time.Millisecond)
		}
		var r restarted
		r.res.at = len(s.sim.Objects())
		down := time.Now()
		r.err = kubeAPI.RestartAPIServer()
		r.back = time.Now()
		r.res.outage = r.back.Sub(down)
		done <- r
	}()
	work()
	var r restarted
	select {
	case r = <-done:
	case <-time.After(3 * time.Minute):
		s.t.Fatalf("%s: the operator did not get far enough to restart kube-apiserver in 3m (operator log: %s)", name, s.op.log.Name())
	}
	if r.err != nil {
		s.t.Fatalf("restarting kube-apiserver: %v", r.err)
	}
	s.t.Logf("%s: kube-apiserver restarted with %d entities in Konnect; it answered again after %s", name, r.res.at, r.res.outage.Round(time.Millisecond))
	for {
		if err := s.op.running(); err != nil {
			s.t.Fatal(err)
		}
		p, err := check()
		if err == nil && p.done == p.total {
			r.res.after = time.Since(r.back)
			s.t.Logf("%s: done %s after kube-apiserver answered again", name, r.res.after.Round(time.Millisecond))
			if r.res.after > apiServerBound {
				s.t.Errorf("%s: done %s after kube-apiserver answered again, over the bound of %s (operator log: %s)",
					name, r.res.after.Round(time.Millisecond), apiServerBound, s.op.log.Name())
			}
			return r.res
		}
		if time.Since(r.back) > 3*time.Minute {
			s.t.Fatalf("%s: not done 3m after kube-apiserver answered again: %v %v (operator log: %s)", name, p, err, s.op.log.Name())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func slowest(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return slices.Max(ds)
}
