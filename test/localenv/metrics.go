package localenv

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
)

// ALMMetricsPort is the containerPort of ALM's /metrics in config/manager: HTTPS, answering only a bearer token that
// ClusterRole alm-metrics-reader lets get /metrics (--metrics-secure, ALM's default).
const ALMMetricsPort = 8443

// The ServiceAccount config/prometheus/metrics_reader_binding.yaml binds to alm-metrics-reader: kube-prometheus's
// Prometheus. The tests scrape ALM with its token, as that Prometheus does.
const (
	PrometheusNamespace      = "monitoring"
	PrometheusServiceAccount = "prometheus-k8s"
)

// metricsTokenTTL is how long MetricsToken reuses a token: the TokenRequest API's tokens last an hour.
const metricsTokenTTL = 30 * time.Minute

// ALMMetricsURL is the URL of ALM's /metrics at its pod's address, which the node routes to from the host.
func ALMMetricsURL(podIP string) string {
	return "https://" + net.JoinHostPort(podIP, strconv.Itoa(ALMMetricsPort)) + "/metrics"
}

// MetricsToken returns a token to scrape ALM's /metrics with: the first call applies
// config/prometheus/metrics_reader_binding.yaml, as a cluster admin does for Prometheus, and waits until the API
// server's authorizer lets its ServiceAccount get /metrics (ALM would cache a denial for 30s); the token is reused for
// half an hour.
func (e *Env) MetricsToken(ctx context.Context) (string, error) {
	e.metricsMu.Lock()
	defer e.metricsMu.Unlock()
	if e.metricsToken != "" && time.Since(e.metricsTokenAt) < metricsTokenTTL {
		return e.metricsToken, nil
	}
	if _, err := e.Kubectl(ctx, "apply", "-f", e.Path("config", "prometheus", "metrics_reader_binding.yaml")); err != nil {
		return "", err
	}
	token, err := e.CP.ServiceAccountToken(ctx, PrometheusNamespace, PrometheusServiceAccount)
	if err != nil {
		return "", err
	}
	err = Poll(ctx, 30*time.Second, func() error {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:                  serviceaccount.MakeUsername(PrometheusNamespace, PrometheusServiceAccount),
			Groups:                serviceaccount.MakeGroupNames(PrometheusNamespace),
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"}}}
		if err := e.Client.Create(ctx, sar); err != nil {
			return err
		}
		if !sar.Status.Allowed {
			return fmt.Errorf("%s may not get /metrics (is ClusterRole alm-metrics-reader applied?): %s", sar.Spec.User, sar.Status.Reason)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	e.metricsToken, e.metricsTokenAt = token, time.Now()
	return token, nil
}
