package attack

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/metrics"
	"github.com/almproject/alm/internal/metricsendpoint"
	"github.com/almproject/alm/test/harness"
	"github.com/almproject/alm/test/metricstest"
)

// metricsReaderRole is the ClusterRole config/rbac ships for whoever scrapes ALM.
const metricsReaderRole = "alm-metrics-reader"

// serveMetrics adds to ALM's manager the metrics server cmd/alm configures with its default flags (only the address is
// set, to a free loopback port), built as ctrl.NewManager builds it: with the manager's identity (ALM's
// ServiceAccount) and HTTP client. It returns the host:port it listens on.
func serveMetrics(t *testing.T, alm *harness.Manager) string {
	t.Helper()
	fs := flag.NewFlagSet("alm", flag.ContinueOnError)
	var o metricsendpoint.Options
	o.BindFlags(fs, metricsReaderRole)
	if err := fs.Parse([]string{"--metrics-bind-address=127.0.0.1:0"}); err != nil {
		t.Fatal(err)
	}
	srv, err := metricsserver.NewServer(o.Server(), alm.GetConfig(), alm.GetHTTPClient())
	if err != nil {
		t.Fatal(err)
	}
	if err := alm.Add(srv); err != nil {
		t.Fatal(err)
	}
	bound, ok := srv.(interface{ GetBindAddr() string })
	if !ok {
		t.Fatalf("controller-runtime's metrics server %T does not say where it listens", srv)
	}
	var addr string
	harness.Eventually(t, 10*time.Second, func() error {
		if addr = bound.GetBindAddr(); addr == "" {
			return fmt.Errorf("the metrics server does not listen yet")
		}
		return nil
	})
	return addr
}

// scrape GETs url with token (none when empty), trusting any certificate (ALM's is self-signed), and returns the
// status and body; an error when no HTTP answer came within 10s.
func scrape(ctx context.Context, url, token string) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return metricstest.Get(ctx, url, token)
}

// token returns a token of the ServiceAccount namespace/name.
func token(t *testing.T, namespace, name string) string {
	t.Helper()
	tok, err := cp.ServiceAccountToken(t.Context(), namespace, name)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// bindMetricsReader binds the ServiceAccount namespace/name to ClusterRole alm-metrics-reader: cluster-wide with a
// ClusterRoleBinding (as a cluster admin does for Prometheus), or in namespace only with a RoleBinding.
func bindMetricsReader(t *testing.T, namespace, name string, clusterWide bool) {
	t.Helper()
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: metricsReaderRole}
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}}
	var obj client.Object = &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "metrics-reader"}, RoleRef: ref, Subjects: subjects}
	if clusterWide {
		obj = &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: namespace + "-" + name + "-metrics-reader"}, RoleRef: ref, Subjects: subjects}
	}
	if err := harness.Client(t, cp).Create(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
}

// victimSeries is the series of ALM's metrics that names CatalogSource namespace/name.
func victimSeries(f metricstest.Families, namespace, name string) error {
	if len(f.Samples(metrics.NameCatalogSourceReady, map[string]string{"namespace": namespace, "name": name})) != 1 {
		return fmt.Errorf("no %s series of CatalogSource %s/%s", metrics.NameCatalogSourceReady, namespace, name)
	}
	return nil
}

// waitMetricsReader waits until the API server's authorizer lets the ServiceAccount namespace/name get /metrics (RBAC sees a
// new binding within moments; a denial ALM's filter saw would be cached for 30s).
func waitMetricsReader(t *testing.T, namespace, name string) {
	t.Helper()
	harness.Eventually(t, 10*time.Second, func() error {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:                  serviceaccount.MakeUsername(namespace, name),
			Groups:                serviceaccount.MakeGroupNames(namespace),
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"}}}
		if err := harness.Client(t, cp).Create(t.Context(), sar); err != nil {
			return err
		}
		if !sar.Status.Allowed {
			return fmt.Errorf("%s may not get /metrics yet: %s", sar.Spec.User, sar.Status.Reason)
		}
		return nil
	})
}

// Attack: read ALM's /metrics, which names every tenant's namespaces, CatalogSources, packages and versions, from any
// pod. Guard: internal/metricsendpoint, as cmd/alm serves /metrics by default — HTTPS only, and
// filters.WithAuthenticationAndAuthorization: a TokenReview of the bearer token and a SubjectAccessReview for get on
// the non-resource URL /metrics, made with ALM's ServiceAccount (tokenreviews create, cmd/alm/rbac.go).
func TestMetricsAreNotOpen(t *testing.T) {
	alm := startALM(t)
	addr := serveMetrics(t, alm)
	url := "https://" + addr + "/metrics"
	admin := harness.Client(t, cp)

	// What the endpoint gives away: a tenant's private CatalogSource, by namespace and name, once ALM's cache has it.
	victim := harness.TenantNamespace(t, admin, "metrics-victim")
	cs := &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: victim, Name: "private"},
		Spec: operatorsv1alpha1.CatalogSourceSpec{ConfigMap: &operatorsv1alpha1.ConfigMapSource{}}}
	if err := admin.Create(t.Context(), cs); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, func() error {
		f, err := metricstest.Gather(crmetrics.Registry) // what the endpoint serves
		if err != nil {
			return err
		}
		return victimSeries(f, victim, "private")
	})

	// Nobody reads it but a ServiceAccount bound to alm-metrics-reader: not without a token, not with a token the API
	// server does not know, not a tenant, not a tenant whose namespace binds alm-metrics-reader (a RoleBinding grants
	// no non-resource URL), not over plain HTTP.
	snoop, _ := tenant(t, "metrics-snoop", []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}, nil)
	bound, _ := tenant(t, "metrics-rolebound", nil, nil)
	bindMetricsReader(t, bound, "tenant", false)
	reader := harness.TenantNamespace(t, admin, "metrics-reader")
	bindMetricsReader(t, reader, "prometheus", true)
	readerToken := token(t, reader, "prometheus")
	// want is the status controller-runtime's filter answers (a token the API server rejects is an error of the
	// TokenReview to it: 500 "Authentication failed"); 0: no HTTP answer, or Go's 400 to plain HTTP on a TLS port.
	for _, tc := range []struct {
		name, url, token string
		want             int
	}{
		{"no token", url, "", http.StatusUnauthorized},
		{"a token the API server does not know", url, "not-a-token", http.StatusInternalServerError},
		{"a tenant's ServiceAccount, admin of its namespace", url, token(t, snoop, "tenant"), http.StatusForbidden},
		{"a tenant's ServiceAccount with a RoleBinding to " + metricsReaderRole, url, token(t, bound, "tenant"), http.StatusForbidden},
		{"plain HTTP to the metrics port", "http://" + addr + "/metrics", readerToken, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, err := scrape(t.Context(), tc.url, tc.token)
			if err != nil && tc.want != 0 {
				t.Fatalf("GET %s: %v", tc.url, err)
			}
			if status == http.StatusOK || strings.Contains(body, victim) || (tc.want != 0 && status != tc.want) ||
				(tc.want == 0 && err == nil && status != http.StatusBadRequest) {
				t.Errorf("GET %s with %s: HTTP %d, want %d without the metrics (body %.300q)", tc.url, tc.name, status, tc.want, body)
			}
		})
	}

	t.Run("a ServiceAccount bound to "+metricsReaderRole, func(t *testing.T) {
		waitMetricsReader(t, reader, "prometheus")
		status, body, err := scrape(t.Context(), url, readerToken)
		if err != nil || status != http.StatusOK {
			t.Fatalf("GET %s: HTTP %d, %v: %.300q", url, status, err, body)
		}
		f, err := metricstest.Parse(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if err := victimSeries(f, victim, "private"); err != nil {
			t.Errorf("GET %s: HTTP 200 but %v", url, err)
		}
	})
}
