package konnect

import (
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/konnectmetrics"
	"github.com/almproject/alm/test/konnectsim"
	"github.com/almproject/alm/test/metricstest"
	"github.com/almproject/alm/test/promtool"
)

// TestMetrics: the figures a user graphs follow what the operator did against Konnect (the simulator counts the
// requests it received): creates counted once with their status code and duration, a lost create's adoption, a
// drift correction, the time spent waiting out a 429's Retry-After, and objects by Programmed state. Each
// environment has a simulator of its own, so its server_url label isolates this test's figures from those of tests
// running beside it; an earlier test's simulator may have had the same address, so the figures are counted from
// what the registry held when this test started (CI failed once with 358 service creates counted for 3).
func TestMetrics(t *testing.T) {
	const period = 2 * time.Second
	e := newEnv(t, envOptions{syncPeriod: period})
	url := e.sim.URL()
	gather := func() metricstest.Families {
		f, err := metricstest.Gather(crmetrics.Registry)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	base := gather()
	since := func(f metricstest.Families, name string, labels map[string]string) float64 {
		return f.Sum(name, labels) - base.Sum(name, labels)
	}
	e.readyControlPlane("cp")
	e.sim.LoseNext(http.MethodPost, konnectsim.PathServices, 1)
	for i := range 3 {
		e.create(serviceObj(fmt.Sprintf("svc-%d", i), "cp", "example.com"))
	}
	svc := &configurationv1alpha1.KongService{}
	for i := range 3 {
		e.waitProgrammed(svc, fmt.Sprintf("svc-%d", i))
	}
	creates := map[string]string{"server_url": url, "operation_type": "create", "entity_type": "service"}
	f := gather()
	// The simulator received 3 service creates (one answered 502 after committing it): so do the metrics.
	if got, want := since(f, konnectmetrics.NameRequests, creates), float64(count(e.sim, http.MethodPost, konnectsim.PathServices)); got != want || want != 3 {
		t.Errorf("service creates counted %g, simulator received %g (want 3): %s", got, want, f.Describe(konnectmetrics.NameRequests))
	}
	if got := since(f, konnectmetrics.NameRequests, map[string]string{"server_url": url, "operation_type": "create", "entity_type": "service", "status_code": "201", "success": "true"}); got != 2 {
		t.Errorf("successful service creates %g, want 2", got)
	}
	if got := since(f, konnectmetrics.NameRequestDuration, creates); got != 3 {
		t.Errorf("service create durations observed %g times, want 3", got)
	}
	if got := since(f, konnectmetrics.NameRequests, map[string]string{"server_url": url, "operation_type": konnectmetrics.OperationAdopt, "entity_type": "service"}); got < 1 {
		t.Errorf("no adoption look-up counted after the lost create: %s", f.Describe(konnectmetrics.NameRequests))
	}
	waitObjects := func(programmed string, want float64) {
		e.eventually(10*time.Second, "objects by Programmed", func() error {
			got, err := gather().Value(konnectmetrics.NameObjects, map[string]string{"kind": "KongService", "programmed": programmed})
			if err != nil || got != want {
				return fmt.Errorf("KongService programmed=%s: %g (%w), want %g", programmed, got, err, want)
			}
			return nil
		})
	}
	waitObjects("True", 3)

	// An edit in Konnect is corrected once.
	drifted := map[string]string{"kind": "KongService"}
	before := f.Sum(konnectmetrics.NameDriftCorrections, drifted)
	if err := e.sim.Edit(svc.Status.Konnect.ID, map[string]any{"host": "edited-in-the-ui.example.com"}); err != nil {
		t.Fatal(err)
	}
	e.eventually(period+5*time.Second, "drift correction counted", func() error {
		if got := gather().Sum(konnectmetrics.NameDriftCorrections, drifted) - before; got != 1 {
			return fmt.Errorf("%g drift corrections, want 1", got)
		}
		return nil
	})

	// A 429 with Retry-After 1s: the wait is counted, and the 429 itself.
	e.sim.Throttle(e.sim.OrganizationID(konnectsim.DefaultToken), 1, time.Second)
	e.create(serviceObj("svc-late", "cp", "late.example.com"))
	e.waitProgrammed(svc, "svc-late")
	f = gather()
	if got := since(f, konnectmetrics.NameWaitSeconds, map[string]string{"server_url": url, "cause": konnectmetrics.CauseRetryAfter}); got < 0.5 {
		t.Errorf("waited %gs for Retry-After, want about 1s: %s", got, f.Describe(konnectmetrics.NameWaitSeconds))
	}
	if got := since(f, konnectmetrics.NameRequests, map[string]string{"server_url": url, "status_code": "429", "success": "false"}); got != 1 {
		t.Errorf("%g requests answered 429, want 1: %s", got, f.Describe(konnectmetrics.NameRequests))
	}

	// A deleted object drops out of the Programmed count.
	if err := e.c.Delete(e.ctx, svc); err != nil {
		t.Fatal(err)
	}
	waitObjects("True", 3)
}

// TestAlertErrorRate evaluates config/prometheus's KonnectRequestErrorRateHigh with Prometheus's own rule engine
// (promtool test rules) against the operator's own metrics: while Konnect answers normally it stays quiet; once
// Konnect answers every request with a 500 it fires, but only after the error rate has held for 10 minutes. The
// operator is scraped every 500ms of real time and the scrapes placed one minute apart, so a 5m range holds the 2.5s
// in which the drift scan lists at least twice (every second). The rule's annotations are left out (promtool would
// compare them; config/prometheus's unit tests check them).
func TestAlertErrorRate(t *testing.T) {
	const alert = "KonnectRequestErrorRateHigh"
	groups, err := promtool.LoadPrometheusRule(filepath.Join("..", "..", "config", "prometheus", "prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	labels, ok := groups.AlertLabels(alert)
	if !ok {
		t.Fatalf("config/prometheus has no alert %s", alert)
	}
	promtool.Path(t) // before the environment starts: fails at once, saying make tools builds it
	e := newEnv(t, envOptions{syncPeriod: time.Second})
	e.readyControlPlane("cp")
	for i := range 3 {
		e.create(serviceObj(fmt.Sprintf("svc-%d", i), "cp", "example.com"))
	}
	svc := &configurationv1alpha1.KongService{}
	for i := range 3 {
		e.waitProgrammed(svc, fmt.Sprintf("svc-%d", i))
	}
	var scrapes []metricstest.Families
	scrape := func(n int) {
		for range n {
			f, err := metricstest.Gather(crmetrics.Registry)
			if err != nil {
				t.Fatal(err)
			}
			scrapes = append(scrapes, f)
			time.Sleep(500 * time.Millisecond)
		}
	}
	scrape(12)
	e.sim.SetErrorRate(1)
	errorsFrom := len(scrapes)
	scrape(16)
	e.sim.SetErrorRate(0)

	url := e.sim.URL()
	series := promtool.InputSeries(scrapes, func(name string, l map[string]string) bool {
		return name == konnectmetrics.NameRequests && l[konnectmetrics.LabelServerURL] == url
	})
	labels[konnectmetrics.LabelServerURL] = url
	promtool.RunUnitTests(t, groups.WithoutAnnotations(), promtool.UnitTests{EvaluationInterval: "1m", Tests: []promtool.Test{{
		Name: "the operator's requests to a Konnect that answers, then answers only 500s", Interval: "1m", InputSeries: series,
		AlertRuleTests: []promtool.AlertTest{
			{EvalTime: promtool.Minutes(errorsFrom - 1), Alertname: alert, ExpAlerts: []promtool.ExpAlert{}}, // Konnect answers normally
			{EvalTime: promtool.Minutes(errorsFrom + 9), Alertname: alert, ExpAlerts: []promtool.ExpAlert{}}, // errors for less than for: 10m
			{EvalTime: promtool.Minutes(len(scrapes) - 1), Alertname: alert, ExpAlerts: []promtool.ExpAlert{{ExpLabels: labels}}},
		},
	}}})
}
