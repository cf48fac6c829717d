package konnect

import (
	"fmt"
	"testing"
	"time"

	"github.com/almproject/alm/test/konnectsim"
)

// BenchmarkKonnectSteadyAllKinds: 2,000 entities of every kind the operator syncs (the mix of declareEveryKind:
// services, routes, consumers, consumer groups, plugin bindings and the nine kinds of upstreams, TLS material, keys
// and vaults) in 2 control planes, created by the konnect-operator running as a process with a 20s sync period
// against the simulator (20ms latency, no budget). Reported: calls/period-steady, the Konnect calls of one sync
// period once every entity is Programmed and nothing changed (drift detection lists each kind once a period per
// control plane, so this stays a few calls per control plane and kind, not one per entity), and s-to-programmed.
//
//	go test -run '^$' -bench BenchmarkKonnectSteadyAllKinds -benchtime 1x ./controllers/konnect/
func BenchmarkKonnectSteadyAllKinds(b *testing.B) {
	if kubeAPI == nil {
		b.Skip("no local control plane (-short)")
	}
	bin := buildOperator(b)
	for range b.N {
		benchmarkSteadyAllKinds(b, bin)
	}
}

func benchmarkSteadyAllKinds(b *testing.B, bin string) {
	const (
		controlPlanes = 2
		perCP         = 1000
		period        = 20 * time.Second
		periods       = 3
	)
	sim := konnectsim.StartTest(b, konnectsim.Options{Latency: 20 * time.Millisecond})
	e, kinds := declareEveryKind(b, sim, controlPlanes, perCP)
	op := startOperatorProcess(b, bin, e.ns, "--sync-period", period.String(), "--konnect-rate-limit", "100",
		"--kube-api-qps", "500", "--kube-api-burst", "1000")
	start := time.Now()
	e.eventually(30*time.Minute, "all Programmed", func() error {
		if err := op.alive(); err != nil {
			return err
		}
		if left := notProgrammedOf(e, kinds); left != 0 {
			time.Sleep(2 * time.Second)
			return fmt.Errorf("%d not Programmed", left)
		}
		return nil
	})
	took := time.Since(start)
	// One period for the last writes' requeues to settle, then whole periods counted.
	waitFor(period)
	sim.ResetCounters()
	waitFor(periods * period)
	if err := op.alive(); err != nil {
		b.Fatal(err)
	}
	steady := float64(sim.TotalRequests()) / periods
	b.ReportMetric(steady, "calls/period-steady")
	b.ReportMetric(took.Seconds(), "s-to-programmed")
	b.Logf("%d entities of %d kinds in %d control planes Programmed in %s; steady state %.1f calls per %s period: %v",
		controlPlanes*perCP, len(kinds), controlPlanes, took.Round(time.Millisecond), steady, period, sim.Counters())
}
