package integration

import (
	"fmt"
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
	"github.com/almproject/alm/test/harness"
	"github.com/almproject/alm/test/metricstest"
)

// scrapeTimeline gathers ALM's metrics n times, every 100ms of real time, and places the scrapes one minute apart:
// the states scraped hold (a Failed version, a CatalogSource that cannot load), so minutes of them are a replay of
// what the running ALM reports, not of made-up figures.
func scrapeTimeline(t *testing.T, n int) (metricstest.Timeline, time.Time) {
	t.Helper()
	start := time.Now()
	var tl metricstest.Timeline
	for i := range n {
		f, err := metricstest.Gather(crmetrics.Registry)
		if err != nil {
			t.Fatal(err)
		}
		tl = append(tl, metricstest.Point{At: start.Add(time.Duration(i) * time.Minute), Families: f})
		time.Sleep(100 * time.Millisecond)
	}
	return tl, start
}

// firingIn lists the label sets of alert firing at minute m of tl, in namespace ns.
func firingIn(t *testing.T, rule metricstest.Rule, tl metricstest.Timeline, start time.Time, m int, ns string) []string {
	t.Helper()
	got, err := rule.Firing(tl, start.Add(time.Duration(m)*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, labels := range got {
		if labels["namespace"] == ns {
			out = append(out, labels["name"])
		}
	}
	return out
}

// TestAlerts evaluates config/prometheus's ALM alerts against ALM's own metrics: a version whose Deployment failed
// its progress deadline and a CatalogSource whose directory does not exist raise ALMOperatorVersionFailed and
// ALMCatalogSourceNotReady once they have held for 10 minutes, and the Succeeded version and the Ready catalog raise
// nothing.
func TestAlerts(t *testing.T) {
	rules, err := metricstest.LoadRules(filepath.Join("..", "..", "config", "prometheus", "prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
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

	tl, start := scrapeTimeline(t, 16)
	for alert, want := range map[string]string{"ALMOperatorVersionFailed": "bad.v1.0.0", "ALMCatalogSourceNotReady": "missing"} {
		rule, ok := rules[alert]
		if !ok {
			t.Fatalf("config/prometheus has no alert %s", alert)
		}
		if got := firingIn(t, rule, tl, start, 9, ns); len(got) != 0 {
			t.Errorf("%s fires after 9 minutes (for: %s): %v", alert, rule.For, got)
		}
		if got := firingIn(t, rule, tl, start, 15, ns); len(got) != 1 || got[0] != want {
			t.Errorf("%s after 15 minutes fires for %v, want exactly %s", alert, got, want)
		}
	}
}
