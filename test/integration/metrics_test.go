package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/metrics"
	"github.com/almproject/alm/test/harness"
	"github.com/almproject/alm/test/metricstest"
)

// waitMetric waits until the metric families gathered from ALM's registry satisfy check.
func waitMetric(t *testing.T, timeout time.Duration, check func(metricstest.Families) error) {
	t.Helper()
	harness.Eventually(t, timeout, func() error {
		fams, err := metricstest.Gather(crmetrics.Registry)
		if err != nil {
			return err
		}
		return check(fams)
	})
}

// TestMetricsFollowTheStory: what a user graphs and alerts on follows an install, a failed install, an upgrade and
// deletions: one phase series per OperatorVersion (gone with the version), installs and upgrades by package and
// result, the hand-over, resolution failures by reason, and the CatalogSource's figures (gone with it).
func TestMetricsFollowTheStory(t *testing.T) {
	c := harness.Client(t, cp)
	harness.RunKubelet(t, c, func(d *appsv1.Deployment) bool { return strings.HasSuffix(d.Name, "-broken-operator") })
	startALM(t, "all")
	ns := harness.Namespace(t, c, "metrics")
	pkg := ns // counters are per package: a package of this test's own
	catalogSource(t, c, ns, "ops")
	bundles := t.TempDir()
	harness.Publish(t, c, harness.WriteBundle(t, bundles, harness.Demo{Package: pkg, Name: "m.v1.0.0", Version: "1.0.0"}), "ops", ns)
	appType(t, c, ns, pkg)
	waitAppType(t, c, ns, pkg, 60*time.Second, installed("1.0.0"))
	v1 := map[string]string{"namespace": ns, "name": "m.v1.0.0", "package": pkg, "version": "1.0.0"}
	cat := map[string]string{"namespace": ns, "name": "ops"}
	waitMetric(t, 30*time.Second, func(f metricstest.Families) error {
		for _, err := range []error{
			f.Equal(metrics.NameOperatorVersionPhase, v1, 1),
			f.Equal(metrics.NameOperatorVersionPhase, with(v1, "phase", "Succeeded"), 1),
			f.Equal(metrics.NameInstalls, map[string]string{"package": pkg, "result": "succeeded"}, 1),
			f.Equal(metrics.NameCatalogSourceReady, cat, 1),
			f.Equal(metrics.NameCatalogSourcePackages, cat, 1),
			f.Equal(metrics.NameCatalogSourceBundles, cat, 1),
			f.Equal(metrics.NameCatalogSourceRejectedBundles, cat, 0),
		} {
			if err != nil {
				return err
			}
		}
		if took, err := f.Value(metrics.NameOperatorVersionTransitionSecs, with(v1, "phase", "Succeeded")); err != nil || took <= 0 {
			return fmt.Errorf("last phase change took %g (%w), want > 0", took, err)
		}
		if _, err := f.Value(metrics.NameCatalogSourceLastSyncAge, cat); err != nil {
			return err
		}
		return nil
	})

	// An AppType for a package no catalog has counts one resolution failure with its reason.
	before, err := metricstest.Gather(crmetrics.Registry)
	if err != nil {
		t.Fatal(err)
	}
	notFound := map[string]string{"reason": operatorsv1alpha1.ReasonPackageNotFound}
	appType(t, c, ns, "no-such-package")
	waitMetric(t, 30*time.Second, func(f metricstest.Families) error {
		return f.Equal(metrics.NameResolutionFailures, notFound, before.Sum(metrics.NameResolutionFailures, notFound)+1)
	})

	// 1.1.0 replaces 1.0.0: one upgrade, one hand-over, and 1.0.0's series go with it.
	harness.Publish(t, c, harness.WriteBundle(t, bundles, harness.Demo{Package: pkg, Name: "m.v1.1.0", Version: "1.1.0", Replaces: "m.v1.0.0"}), "ops", ns)
	waitAppType(t, c, ns, pkg, 60*time.Second, installed("1.1.0"))
	harness.WaitGone(t, c, &operatorsv1alpha1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m.v1.0.0"}}, 60*time.Second)
	waitMetric(t, 30*time.Second, func(f metricstest.Families) error {
		for _, err := range []error{
			f.Equal(metrics.NameOperatorVersionPhase, map[string]string{"namespace": ns, "name": "m.v1.1.0", "phase": "Succeeded"}, 1),
			f.Equal(metrics.NameUpgrades, map[string]string{"package": pkg, "result": "succeeded"}, 1),
			f.Equal(metrics.NameAdoptions, map[string]string{"package": pkg}, 1),
			f.Equal(metrics.NameInstalls, map[string]string{"package": pkg, "result": "succeeded"}, 1),
		} {
			if err != nil {
				return err
			}
		}
		if s := f.Samples(metrics.NameOperatorVersionPhase, v1); len(s) != 0 {
			return fmt.Errorf("the deleted m.v1.0.0 still has series: %v", s)
		}
		return nil
	})

	// A version whose Deployment fails its progress deadline is Failed, and counted so.
	broken := harness.Demo{Package: ns + "-broken", Name: "broken.v1.0.0", Version: "1.0.0"}
	harness.Publish(t, c, harness.WriteBundle(t, bundles, broken), "ops", ns)
	appType(t, c, ns, broken.Package)
	harness.Eventually(t, 30*time.Second, func() error {
		return harness.MarkDeploymentFailed(t.Context(), c, ns, broken.Package+"-operator", "pods crash")
	})
	harness.WaitPhase(t, c, ns, broken.Name, operatorsv1alpha1.PhaseFailed, 60*time.Second)
	waitMetric(t, 30*time.Second, func(f metricstest.Families) error {
		if err := f.Equal(metrics.NameOperatorVersionPhase, map[string]string{"namespace": ns, "name": broken.Name, "phase": "Failed"}, 1); err != nil {
			return err
		}
		return f.Equal(metrics.NameInstalls, map[string]string{"package": broken.Package, "result": "failed"}, 1)
	})

	// A deleted CatalogSource drops its series.
	if err := c.Delete(t.Context(), &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ops"}}); err != nil {
		t.Fatal(err)
	}
	waitMetric(t, 30*time.Second, func(f metricstest.Families) error {
		if s := f.Samples(metrics.NameCatalogSourceReady, cat); len(s) != 0 {
			return fmt.Errorf("the deleted CatalogSource still has series: %v", s)
		}
		return nil
	})
}

func with(labels map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for key, val := range labels {
		out[key] = val
	}
	return out
}
