package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/test/localenv"
	"github.com/almproject/alm/test/metricstest"
)

// konnectMetricsPort is the containerPort the Konnect operator's Deployment declares for /metrics (plain HTTP, open);
// ALM's is localenv.ALMMetricsPort (HTTPS, with a token). The tests reach them at the pod's IP, as Prometheus would.
const konnectMetricsPort = 8080

// metricsEndpoint returns the URL of the /metrics of a Deployment's running pod and the token to read it with: ALM's
// over HTTPS with the token of the ServiceAccount config/prometheus binds to alm-metrics-reader, as Prometheus reads
// it; the Konnect operator's over plain HTTP with none.
func metricsEndpoint(t *testing.T, ctx context.Context, env *localenv.Env, namespace, deployment string) (url, token string) {
	t.Helper()
	pod := runningPod(t, env, namespace, deployment)
	port, scheme := int32(konnectMetricsPort), "http"
	if namespace == localenv.ALMNamespace && deployment == localenv.ALMDeployment {
		var err error
		if token, err = env.MetricsToken(ctx); err != nil {
			t.Fatalf("a token to read ALM's metrics: %v", err)
		}
		port, scheme = localenv.ALMMetricsPort, "https"
	}
	return fmt.Sprintf("%s://%s/metrics", scheme, net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(port)))), token
}

// secrets are the values that must never be seen outside a Secret or a token file, by what they are.
type secrets map[string]string

// storySecrets are the Konnect token, every value of every Secret the demo creates, and the ServiceAccount tokens
// the kubelet mounted into ALM's and the Konnect operator's running pods.
func storySecrets(t *testing.T, env *localenv.Env) secrets {
	t.Helper()
	s := secrets{"the Konnect token": env.KonnectToken}
	for _, obj := range env.DemoObjects(localenv.DemoNamespace) {
		secret, ok := obj.(*corev1.Secret)
		if !ok {
			continue
		}
		for k, v := range secret.StringData {
			s[fmt.Sprintf("Secret %s/%s key %s", secret.Namespace, secret.Name, k)] = v
		}
		for k, v := range secret.Data {
			s[fmt.Sprintf("Secret %s/%s key %s", secret.Namespace, secret.Name, k)] = string(v)
		}
	}
	if len(s) < 2 {
		t.Fatalf("the demo creates no Secret: nothing to look for besides the token")
	}
	s["ALM's ServiceAccount token"] = podToken(t, env, localenv.ALMNamespace, localenv.ALMDeployment)
	s["the Konnect operator's ServiceAccount token"] = podToken(t, env, ns, localenv.Package)
	token, err := env.MetricsToken(t.Context())
	must(t, err)
	s["the token ALM's metrics are scraped with"] = token
	for what, v := range s {
		if len(v) < 16 {
			t.Fatalf("%s is %d characters: too short to grep for without false matches", what, len(v))
		}
	}
	return s
}

// runningPod returns the Ready pod of a Deployment.
func runningPod(t *testing.T, env *localenv.Env, namespace, deployment string) *corev1.Pod {
	t.Helper()
	pod, err := env.RunningPod(t.Context(), namespace, deployment)
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

func podToken(t *testing.T, env *localenv.Env, namespace, deployment string) string {
	t.Helper()
	token, err := localenv.PodToken(runningPod(t, env, namespace, deployment))
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// scrapeMetrics reads the /metrics endpoint of a Deployment's running pod. It fails unless the answer holds samples
// of controller-runtime's reconcile metrics, so that a leak check over it cannot pass on an empty page.
func scrapeMetrics(t *testing.T, ctx context.Context, env *localenv.Env, namespace, deployment string) string {
	t.Helper()
	url, token := metricsEndpoint(t, ctx, env, namespace, deployment)
	// A process that has just started (e.g. the operator after an upgrade, waiting for the leader Lease the replaced
	// process released) has no reconcile counted yet: wait until it has, which then holds.
	var body string
	samples := 0
	err := localenv.Poll(ctx, 30*time.Second, func() error {
		var status int
		var err error
		body, status, err = get(ctx, url, token)
		if err != nil {
			return err
		}
		samples = 0
		for _, line := range strings.Split(body, "\n") {
			if line != "" && !strings.HasPrefix(line, "#") {
				samples++
			}
		}
		if status != http.StatusOK || samples == 0 || !strings.Contains(body, "controller_runtime_reconcile_total{") {
			return fmt.Errorf("HTTP %d, %d samples, no controller_runtime_reconcile_total: nothing to check", status, samples)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("the metrics of %s/%s at %s: %v", namespace, deployment, url, err)
	}
	t.Logf("scraped %d metric samples of %s/%s", samples, namespace, deployment)
	return body
}

// get reads url with token (none when empty), within 10s.
func get(ctx context.Context, url, token string) (string, int, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	status, body, err := metricstest.Get(ctx, url, token)
	return body, status, err
}

// assertNoSecretLeaked looks for every secret value in the texts given (metrics scraped earlier), every process
// log, the control plane's log, ALM's metrics, every Event, and every object ALM or the operator writes a status to.
func assertNoSecretLeaked(t *testing.T, ctx context.Context, env *localenv.Env, values secrets, texts map[string]string) {
	t.Helper()
	texts["the metrics of ALM"] = scrapeMetrics(t, ctx, env, localenv.ALMNamespace, localenv.ALMDeployment)
	logs := env.Logs("")
	if len(logs) == 0 {
		t.Fatal("no process logs to check")
	}
	for path, log := range logs {
		texts["log "+path] = log
	}
	if kube, err := os.ReadFile(filepath.Join(env.StateDir, "kube.log")); err == nil {
		texts["the control plane's log"] = string(kube)
	}
	events := &corev1.EventList{}
	must(t, env.Client.List(ctx, events))
	if len(events.Items) == 0 {
		t.Fatal("no Events to check")
	}
	for _, e := range events.Items {
		data, err := json.Marshal(e)
		must(t, err)
		texts[fmt.Sprintf("Event %s/%s", e.Namespace, e.Name)] = string(data)
	}
	for _, list := range []client.ObjectList{
		&konnectv1alpha1.KonnectAPIAuthConfigurationList{}, &konnectv1alpha2.KonnectGatewayControlPlaneList{},
		&configurationv1alpha1.KongServiceList{}, &configurationv1alpha1.KongRouteList{}, &configurationv1.KongConsumerList{},
		&operatorsv1alpha1.OperatorVersionList{}, &operatorsv1alpha1.AppTypeList{}, &operatorsv1alpha1.CatalogSourceList{},
		&appsv1.DeploymentList{},
	} {
		must(t, env.Client.List(ctx, list))
		data, err := json.Marshal(list)
		must(t, err)
		texts[fmt.Sprintf("%T", list)] = string(data)
	}
	for what, value := range values {
		for where, text := range texts {
			if strings.Contains(text, value) {
				t.Errorf("%s appears in %s", what, where)
			}
		}
	}
	t.Logf("checked %d secret values in %d process logs, %d Events, metrics and statuses (%d texts)", len(values), len(logs), len(events.Items), len(texts))
}
