package integration

import (
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/metrics"
	"github.com/almproject/alm/test/harness"
	"github.com/almproject/alm/test/metricstest"
	"github.com/almproject/alm/test/promtool"
)

// scrape gathers ALM's metrics n times, every 100ms of real time; the alert test places the scrapes one minute
// apart: the states scraped hold (a Failed version, a CatalogSource that cannot load), so minutes of them are a replay
// of what the running ALM reports, not of made-up figures.
func scrape(t *testing.T, n int) []metricstest.Families {
	t.Helper()
	var out []metricstest.Families
	for range n {
		f, err := metricstest.Gather(crmetrics.Registry)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
		time.Sleep(100 * time.Millisecond)
	}
	return out
}

// expect is one alert of groups expected firing, with the rule's labels and labels.
func expect(t *testing.T, groups promtool.RuleGroups, alert string, labels map[string]string) promtool.ExpAlert {
	t.Helper()
	want, ok := groups.AlertLabels(alert)
	if !ok {
		t.Fatalf("config/prometheus has no alert %s", alert)
	}
	maps.Copy(want, labels)
	return promtool.ExpAlert{ExpLabels: want}
}

// TestAlerts evaluates config/prometheus's ALM alerts with Prometheus's own rule engine (promtool test rules)
// against ALM's own metrics: a version whose Deployment failed its progress deadline and a CatalogSource whose
// directory does not exist raise ALMOperatorVersionFailed and ALMCatalogSourceNotReady once they have held for 10
// minutes, and the Succeeded version and the Ready catalog raise nothing. Only this test's namespace's series are
// given to promtool (other tests share the registry); the rules' annotations are left out (promtool would compare
// them; config/prometheus's unit tests check them).
func TestAlerts(t *testing.T) {
	groups, err := promtool.LoadPrometheusRule(filepath.Join("..", "..", "config", "prometheus", "prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	promtool.Path(t) // before ALM starts: fails at once, saying make tools builds it
	c := harness.Client(t, cp)
	harness.RunKubelet(t, c, func(d *appsv1.Deployment) bool { return strings.HasPrefix(d.Name, "bad-") })
	startALM(t, "all")
	ns := harness.Namespace(t, c, "alerts")
	catalogSource(t, c, ns, "ops")
	missing := &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "missing"},
		Spec: operatorsv1alpha1.CatalogSourceSpec{Directory: &operatorsv1alpha1.DirectorySource{Path: "/nonexistent/" + ns}}}
	if err := c.Create(t.Context(), missing); err != nil {
		t.Fatal(err)
	}
	bundles := t.TempDir()
	harness.Publish(t, c, harness.WriteBundle(t, bundles, harness.Demo{Package: "good", Name: "good.v1.0.0", Version: "1.0.0"}), "ops", ns)
	harness.Publish(t, c, harness.WriteBundle(t, bundles, harness.Demo{Package: "bad", Name: "bad.v1.0.0", Version: "1.0.0"}), "ops", ns)
	appType(t, c, ns, "good")
	appType(t, c, ns, "bad")
	harness.WaitPhase(t, c, ns, "good.v1.0.0", operatorsv1alpha1.PhaseSucceeded, time.Minute)
	harness.Eventually(t, 30*time.Second, func() error {
		return harness.MarkDeploymentFailed(t.Context(), c, ns, "bad-operator", "pods crash")
	})
	harness.WaitPhase(t, c, ns, "bad.v1.0.0", operatorsv1alpha1.PhaseFailed, time.Minute)
	harness.Eventually(t, 30*time.Second, func() error {
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(missing), missing); err != nil {
			return err
		}
		if ready := apimeta.FindStatusCondition(missing.Status.Conditions, operatorsv1alpha1.ConditionReady); ready == nil || ready.Status != metav1.ConditionFalse {
			return fmt.Errorf("CatalogSource missing: Ready %v, want False", ready)
		}
		return nil
	})

	series := promtool.InputSeries(scrape(t, 16), func(name string, labels map[string]string) bool {
		return (name == metrics.NameOperatorVersionPhase || name == metrics.NameCatalogSourceReady) && labels[metrics.LabelNamespace] == ns
	})
	none := []promtool.ExpAlert{}
	failed := expect(t, groups, "ALMOperatorVersionFailed", map[string]string{"namespace": ns, "name": "bad.v1.0.0", "package": "bad", "version": "1.0.0"})
	notReady := expect(t, groups, "ALMCatalogSourceNotReady", map[string]string{"namespace": ns, "name": "missing"})
	promtool.RunUnitTests(t, groups.WithoutAnnotations(), promtool.UnitTests{EvaluationInterval: "1m", Tests: []promtool.Test{{
		Name: "a Failed and a Succeeded version, a CatalogSource that cannot load and a Ready one", Interval: "1m", InputSeries: series,
		AlertRuleTests: []promtool.AlertTest{
			{EvalTime: "9m", Alertname: "ALMOperatorVersionFailed", ExpAlerts: none},
			{EvalTime: "9m", Alertname: "ALMCatalogSourceNotReady", ExpAlerts: none},
			{EvalTime: "15m", Alertname: "ALMOperatorVersionFailed", ExpAlerts: []promtool.ExpAlert{failed}},
			{EvalTime: "15m", Alertname: "ALMCatalogSourceNotReady", ExpAlerts: []promtool.ExpAlert{notReady}},
		},
	}}})
}
