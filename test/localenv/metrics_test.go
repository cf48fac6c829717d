package localenv

import (
	"context"
	"net/http"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/almproject/alm/internal/metricsendpoint"
	"github.com/almproject/alm/test/localkube"
	"github.com/almproject/alm/test/metricstest"
)

// TestMetricsTokenReadsALMMetrics: the token the end-to-end and chaos tests scrape ALM with — of the ServiceAccount
// config/prometheus/metrics_reader_binding.yaml binds to alm-metrics-reader — reads /metrics served as ALM serves
// it, where no token does not.
func TestMetricsTokenReadsALMMetrics(t *testing.T) {
	root, err := localkube.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	e := &Env{Root: root, StateDir: t.TempDir()}
	t.Cleanup(e.Stop)
	if err := e.startControlPlane("", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Kubectl(t.Context(), "apply", "-f", e.Path("config", "rbac", "metrics_reader_role.yaml")); err != nil {
		t.Fatal(err)
	}
	o := metricsendpoint.Options{BindAddress: "127.0.0.1:0", Secure: true}
	httpClient, err := rest.HTTPClientFor(e.CP.Config)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := metricsserver.NewServer(o.Server(), e.CP.Config, httpClient)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	var url string
	if err := Poll(t.Context(), 10*time.Second, func() error {
		if addr := srv.(interface{ GetBindAddr() string }).GetBindAddr(); addr != "" {
			url = "https://" + addr + "/metrics"
			return nil
		}
		return context.DeadlineExceeded
	}); err != nil {
		t.Fatal("the metrics server does not listen")
	}

	token, err := e.MetricsToken(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if again, err := e.MetricsToken(t.Context()); err != nil || again != token {
		t.Errorf("a second MetricsToken: %v, same token %v", err, again == token)
	}
	for _, tc := range []struct {
		token string
		want  int
	}{{token, http.StatusOK}, {"", http.StatusUnauthorized}} {
		if status, body, err := metricstest.Get(t.Context(), url, tc.token); err != nil || status != tc.want {
			t.Errorf("GET %s with token %v: HTTP %d, %v, want %d: %.200s", url, tc.token != "", status, err, tc.want, body)
		}
	}
}
