package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/konnectmetrics"
	"github.com/almproject/alm/controllers/metrics"
	"github.com/almproject/alm/test/localenv"
	"github.com/almproject/alm/test/metricstest"
)

// The figures a user graphs, scraped from ALM's /metrics (HTTPS, with the token of a ServiceAccount bound to
// alm-metrics-reader) and the Konnect operator's (plain HTTP) during the story, as Prometheus would scrape them.

// waitMetrics scrapes the running pod of namespace/deployment until check accepts what it serves (a figure settles
// within a few scrapes: ALM counts after its status write, the cache catches up).
func waitMetrics(t *testing.T, ctx context.Context, env *localenv.Env, namespace, deployment string, check func(metricstest.Families) error) metricstest.Families {
	t.Helper()
	var fams metricstest.Families
	must(t, localenv.Poll(ctx, 30*time.Second, func() error {
		url, token := metricsEndpoint(t, ctx, env, namespace, deployment)
		f, err := metricstest.ScrapeAs(ctx, url, token)
		if err != nil {
			return err
		}
		fams = f
		return check(f)
	}))
	return fams
}

func all(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// assertALMInstallMetrics: after the first install, ALM reports the version Succeeded, one install, and its catalog
// Ready with the bundle it serves — to the token bound to alm-metrics-reader, and to nobody without a token.
func assertALMInstallMetrics(t *testing.T, ctx context.Context, env *localenv.Env, ov *operatorsv1alpha1.OperatorVersion) {
	t.Helper()
	url, _ := metricsEndpoint(t, ctx, env, localenv.ALMNamespace, localenv.ALMDeployment)
	if body, status, err := get(ctx, url, ""); err != nil || status != http.StatusUnauthorized {
		t.Errorf("GET %s without a token: HTTP %d, %v, want 401 (ALM's metrics are for alm-metrics-reader): %.200s", url, status, err, body)
	}
	cat := map[string]string{"namespace": localenv.ALMNamespace, "name": localenv.CatalogName}
	waitMetrics(t, ctx, env, localenv.ALMNamespace, localenv.ALMDeployment, func(f metricstest.Families) error {
		return all(
			f.Equal(metrics.NameOperatorVersionPhase, map[string]string{"namespace": ns, "name": ov.Name, "package": localenv.Package, "version": "1.0.0", "phase": "Succeeded"}, 1),
			f.Equal(metrics.NameInstalls, map[string]string{"package": localenv.Package, "result": metrics.ResultSucceeded}, 1),
			f.Equal(metrics.NameCatalogSourceReady, cat, 1),
			f.Equal(metrics.NameCatalogSourceBundles, cat, 1),
		)
	})
}

// assertKonnectCreatesCounted: the Konnect operator counted each create once, answered 201, as many as the
// simulator received, and reports the 4 objects Programmed.
func assertKonnectCreatesCounted(t *testing.T, ctx context.Context, env *localenv.Env) {
	t.Helper()
	f := waitMetrics(t, ctx, env, ns, localenv.Package, func(f metricstest.Families) error {
		return f.Equal(konnectmetrics.NameObjects, map[string]string{"kind": "KongRoute", "programmed": "True"}, 1)
	})
	for _, entity := range []string{"control_plane", "service", "route", "consumer"} {
		if err := f.Equal(konnectmetrics.NameRequests, map[string]string{"operation_type": "create", "entity_type": entity, "status_code": "201", "success": "true"}, 1); err != nil {
			t.Errorf("Konnect creates: %v (%s)", err, f.Describe(konnectmetrics.NameRequests))
		}
	}
	if got, want := f.Sum(konnectmetrics.NameRequests, map[string]string{"operation_type": "create"}), float64(posts(env)); got != want {
		t.Errorf("the operator counted %g creates, the simulator received %g", got, want)
	}
	if got := f.Sum(konnectmetrics.NameRequestDuration, map[string]string{"operation_type": "create"}); got != 4 {
		t.Errorf("%g create durations observed, want 4", got)
	}
	if got := f.Sum(konnectmetrics.NameObjects, map[string]string{"programmed": "True"}); got != 4 {
		t.Errorf("%g objects Programmed, want 4: %s", got, f.Describe(konnectmetrics.NameObjects))
	}
}

// assertDriftCounted: the edit made in Konnect was corrected once.
func assertDriftCounted(t *testing.T, ctx context.Context, env *localenv.Env) {
	t.Helper()
	waitMetrics(t, ctx, env, ns, localenv.Package, func(f metricstest.Families) error {
		return f.Equal(konnectmetrics.NameDriftCorrections, map[string]string{"kind": "KongService"}, 1)
	})
}

// assertALMUpgradeMetrics: after the upgrades so far (upgrades succeeded, failed), ALM counts them and the
// hand-overs, and reports only the installed version's phase: the replaced ones are gone with their series.
func assertALMUpgradeMetrics(t *testing.T, ctx context.Context, env *localenv.Env, installed string, succeeded, failed float64) {
	t.Helper()
	pkg := map[string]string{"package": localenv.Package}
	waitMetrics(t, ctx, env, localenv.ALMNamespace, localenv.ALMDeployment, func(f metricstest.Families) error {
		if err := all(
			f.Equal(metrics.NameUpgrades, map[string]string{"package": localenv.Package, "result": metrics.ResultSucceeded}, succeeded),
			f.Equal(metrics.NameAdoptions, pkg, succeeded+failed),
			f.Equal(metrics.NameOperatorVersionPhase, map[string]string{"namespace": ns, "name": installed, "phase": "Succeeded"}, 1),
		); err != nil {
			return err
		}
		if got := f.Sum(metrics.NameUpgrades, map[string]string{"package": localenv.Package, "result": metrics.ResultFailed}); got != failed {
			return fmt.Errorf("%g failed upgrades, want %g", got, failed)
		}
		if s := f.Samples(metrics.NameOperatorVersionPhase, map[string]string{"namespace": ns}); len(s) != 1 {
			return fmt.Errorf("%d OperatorVersion series in %s, want only %s's: %s", len(s), ns, installed, f.Describe(metrics.NameOperatorVersionPhase))
		}
		return nil
	})
}

// logStatus runs `almctl status -A` and `almctl status konnect-operator -n konnect-system` (the README shows this
// output) and checks that they name what is installed.
func logStatus(t *testing.T, ctx context.Context, env *localenv.Env, version string) {
	t.Helper()
	for _, args := range [][]string{{"status", "-A"}, {"status", localenv.Package, "-n", ns}} {
		out, err := exec.CommandContext(ctx, almctl, append(args, "--kubeconfig", env.Kubeconfig)...).CombinedOutput()
		if err != nil {
			t.Fatalf("almctl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		t.Logf("STATUS $ almctl %s\n%s", strings.Join(args, " "), out)
		if !strings.Contains(string(out), version) || !strings.Contains(string(out), "Succeeded") {
			t.Errorf("almctl %s does not show %s Succeeded:\n%s", strings.Join(args, " "), version, out)
		}
	}
}
