package workloads

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/loops"
	"github.com/almproject/alm/test/harness"
)

// clock is a time.Now that a test moves forward.
type clock struct{ offset atomic.Int64 }

func (c *clock) Now() time.Time               { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *clock) advance(d time.Duration)      { c.offset.Add(int64(d)) }
func (c *clock) option() func(*loops.Options) { return func(o *loops.Options) { o.Now = c.Now } }

// A webhook operator's certificates are renewed before they expire, in place, with no failed write and no pod
// replaced: ALM writes the renewed certificate into the serving Secret, the kubelet refreshes the mounted Secret in
// the running container, and the operator (controller-runtime's certwatcher) serves it from the same process. ALM's
// clock (loops.Options.Now) is set back so that each certificate is due when ALM next starts, while every
// certificate the webhooks serve to the real kube-apiserver once writes are checked is valid at the real time:
//
//   - installed 500 days ago: CA valid -500..+230 days (due at -13), serving certificate -500..-135 (due at -257);
//   - ALM restarted 250 days ago: the serving certificate is due and renewed (-250..+115, due at -7), the CA is not;
//   - ALM restarted at the real time, while Widgets are written: the CA is due and renewed, the caBundles trust the
//     new and the previous CA, and the serving certificate is issued by the new one.
//
// Each time the pod is the one installed (same container, same process) and a TLS handshake with the webhook
// Service's cluster IP (through kube-proxy, from the host) shows it serving the renewed certificate, which the
// fallback (a rollout, TestWebhookCertificateFallbackRollout) then leaves alone: it is due here, as the certificate
// the pod was started with has expired, but only FallbackGrace after the renewal, and ALM checks what the Service
// serves first.
func TestWebhookCertificateRotation(t *testing.T) {
	if os.Getenv("ALM_SKIP_WEBHOOKS") != "" {
		t.Skip("ALM_SKIP_WEBHOOKS")
	}
	pushWebhookOperator(t, "1.0.0")
	c := harness.Client(t, cp)
	ns := harness.Namespace(t, c, "rotation")
	logPodsOnFailure(t, ns)
	day := 24 * time.Hour
	clk := &clock{}
	clk.advance(-500 * day)
	alm := startALM(t, "all", clk.option())
	catalogSource(t, c, ns, "ops")
	harness.Publish(t, c, harness.WriteBundle(t, t.TempDir(), webhookDemo(ns, "1.0.0", "")), "ops", ns)
	appType(t, c, ns, whop)
	waitAppType(t, c, ns, whop, 2*time.Minute, installed("1.0.0"))
	servingSecret := client.ObjectKey{Namespace: ns, Name: whop + "-operator-service-cert"}
	caSecret := client.ObjectKey{Namespace: ns, Name: whop + ".v1.0.0-webhook-ca"}
	serving := secretValue(t, c, servingSecret, corev1.TLSCertKey)
	ca := secretValue(t, c, caSecret, corev1.ServiceAccountRootCAKey)
	installedPod := waitOnlyPod(t, c, ns, whop+"-operator")

	// 250 days later: the serving certificate is renewed in place, the CA kept.
	alm.Stop()
	clk.advance(250 * day)
	alm = startALM(t, "all", clk.option())
	serving = waitSecretChanged(t, c, servingSecret, corev1.TLSCertKey, serving)
	waitServes(t, c, ns, whop+"-operator-service", serving)
	if now := secretValue(t, c, caSecret, corev1.ServiceAccountRootCAKey); now != ca {
		t.Fatalf("the CA was renewed with the serving certificate; it is not due")
	}
	checkSamePod(t, c, installedPod)
	checkWebhooksNamed(t, c, ns, "1.0.0", "renewed")
	t.Logf("the serving certificate was renewed and pod %s serves it from the same process; the CA is due at %s",
		installedPod.Name, renewalTime(t, ca).Format(time.DateOnly))

	// At the real time, while Widgets are written: the CA is renewed, and the serving certificate with it.
	writes := writeWidgets(t, c, ns)
	alm.Stop()
	clk.advance(-time.Duration(clk.offset.Load()))
	startALM(t, "all", clk.option())
	newCA := waitSecretChanged(t, c, caSecret, corev1.ServiceAccountRootCAKey, ca)
	serving = waitSecretChanged(t, c, servingSecret, corev1.TLSCertKey, serving)
	checkCABundles(t, c, ns, newCA, ca)
	waitServes(t, c, ns, whop+"-operator-service", serving)
	checkWebhooksNamed(t, c, ns, "1.0.0", "ca-renewed")
	writes().check(t, "the CA's renewal", 0)
	checkSamePod(t, c, installedPod)
	uninstallWebhookOperator(t, c, ns)
}

// An operator that never reloads its serving certificate (webhook-operator --cert-reload=false) keeps serving the
// one it started with after a renewal in place; once the fallback is due (servingcert.FallbackBefore the expiry of
// that certificate), ALM sees with a TLS handshake that the Service still serves it and rolls the pods onto the
// renewed one. The rollout replaces the pod, so a write may meet the stopping pod's keep-alive close (see
// widgetWrites.check): one such EOF is allowed here, as in an upgrade, and nothing else.
//
//   - installed 250 days ago: CA -250..+480 days, serving certificate -250..+115 (due at -7, fallback at +54);
//   - ALM restarted at the real time: the serving certificate is renewed in place (0..+365); the pod stays and
//     serves the previous one;
//   - ALM restarted 55 days later: the fallback is due; the pod is replaced and the new one serves the renewed one.
func TestWebhookCertificateFallbackRollout(t *testing.T) {
	if os.Getenv("ALM_SKIP_WEBHOOKS") != "" {
		t.Skip("ALM_SKIP_WEBHOOKS")
	}
	pushWebhookOperator(t, "1.0.0")
	c := harness.Client(t, cp)
	ns := harness.Namespace(t, c, "fallback")
	logPodsOnFailure(t, ns)
	day := 24 * time.Hour
	clk := &clock{}
	clk.advance(-250 * day)
	alm := startALM(t, "all", clk.option())
	catalogSource(t, c, ns, "ops")
	demo := webhookDemo(ns, "1.0.0", "")
	demo.Args = append(demo.Args, "--cert-reload=false")
	harness.Publish(t, c, harness.WriteBundle(t, t.TempDir(), demo), "ops", ns)
	appType(t, c, ns, whop)
	waitAppType(t, c, ns, whop, 2*time.Minute, installed("1.0.0"))
	service, servingSecret := whop+"-operator-service", client.ObjectKey{Namespace: ns, Name: whop + "-operator-service-cert"}
	first := secretValue(t, c, servingSecret, corev1.TLSCertKey)
	installedPod := waitOnlyPod(t, c, ns, whop+"-operator")
	waitServes(t, c, ns, service, first)

	// At the real time: renewed in place; the operator does not reload it, and it is not rolled yet.
	alm.Stop()
	clk.advance(250 * day)
	alm = startALM(t, "all", clk.option())
	renewed := waitSecretChanged(t, c, servingSecret, corev1.TLSCertKey, first)
	waitRefreshed(t, c, installedPod, renewed)
	checkWebhooksNamed(t, c, ns, "1.0.0", "renewed")
	checkServes(t, c, ns, service, first)
	checkSamePod(t, c, installedPod)

	// 55 days later the fallback is due: the pods are rolled onto the renewed certificate.
	writes := writeWidgets(t, c, ns)
	alm.Stop()
	clk.advance(55 * day)
	startALM(t, "all", clk.option())
	waitRolledOut(t, c, ns, whop+"-operator", renewed)
	if p := waitOnlyPod(t, c, ns, whop+"-operator"); p.UID == installedPod.UID {
		t.Fatalf("pod %s was not replaced by the fallback rollout", p)
	}
	waitServes(t, c, ns, service, renewed)
	checkWebhooksNamed(t, c, ns, "1.0.0", "rolled")
	writes().check(t, "the fallback rollout", 1)
	uninstallWebhookOperator(t, c, ns)
}

// served returns the certificate (PEM) Service ns/name presents in a TLS handshake on its cluster IP and first
// port, reached from the host through kube-proxy, as ALM's own check reaches it.
func served(t *testing.T, c client.Client, ns, name string) (string, error) {
	svc := &corev1.Service{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, svc); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	addr := net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(svc.Spec.Ports[0].Port)))
	raw, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	// Not verified: the test compares the certificate itself with the one in the Secret.
	conn := tls.Client(raw, &tls.Config{ServerName: name + "." + ns + ".svc", InsecureSkipVerify: true})
	defer func() { _ = conn.Close() }()
	if err := conn.HandshakeContext(ctx); err != nil {
		return "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: conn.ConnectionState().PeerCertificates[0].Raw})), nil
}

// waitServes waits until Service ns/name presents cert (PEM).
func waitServes(t *testing.T, c client.Client, ns, name, cert string) {
	t.Helper()
	harness.Eventually(t, time.Minute, func() error {
		got, err := served(t, c, ns, name)
		if err != nil {
			return fmt.Errorf("TLS handshake with Service %s/%s: %w", ns, name, err)
		}
		if got != cert {
			return fmt.Errorf("Service %s/%s serves certificate %s, want the renewed %s", ns, name, fingerprint(got), fingerprint(cert))
		}
		return nil
	})
	t.Logf("a TLS handshake with Service %s/%s shows certificate %s, the one in its Secret", ns, name, fingerprint(cert))
}

// checkServes checks that Service ns/name presents cert (PEM) now.
func checkServes(t *testing.T, c client.Client, ns, name, cert string) {
	t.Helper()
	got, err := served(t, c, ns, name)
	if err != nil || got != cert {
		t.Fatalf("Service %s/%s serves %s (%v), want %s", ns, name, fingerprint(got), err, fingerprint(cert))
	}
}

// servingCertFile is the serving certificate as the operator reads it: ALM mounts the serving Secret on
// controller-runtime's default webhook certificate directory.
const servingCertFile = "/tmp/k8s-webhook-server/serving-certs/tls.crt"

// waitRefreshed waits until pod's container sees cert (PEM) in its mounted serving certificate: the kubelet has
// refreshed the Secret volume (on the node runner, the runner wrote the file; here the file is read through the
// container's own mount namespace). It fails at once when the pod or its process is replaced (the renewal rolled it).
func waitRefreshed(t *testing.T, c client.Client, pod podProcess, cert string) {
	t.Helper()
	harness.Eventually(t, time.Minute, func() error {
		pods, err := deploymentPods(t, c, pod.Namespace, pod.Deployment)
		if err != nil {
			return err
		}
		if len(pods) != 1 || pods[0].UID != pod.UID {
			t.Fatalf("pods of %s/%s after the renewal: %s; the renewal rolled the pods before the mounted certificate of %s was refreshed",
				pod.Namespace, pod.Deployment, podNames(pods), pod.Name)
		}
		if now, err := processOf(&pods[0], pod.Deployment); err != nil || now != pod {
			t.Fatalf("pod %s after the renewal: %s (%v), want the same process %s", pod.Name, now, err, pod)
		}
		got, err := containerFile(pod, servingCertFile)
		if err != nil {
			return err
		}
		if string(got) != cert {
			return fmt.Errorf("%s in pod %s: %s, want the renewed certificate %s", servingCertFile, pod.Name, fingerprint(string(got)), fingerprint(cert))
		}
		return nil
	})
}

func fingerprint(cert string) string {
	sum := sha256.Sum256([]byte(cert))
	return hex.EncodeToString(sum[:])[:12]
}

// checkCABundles checks that every caBundle of the webhook operator (its admission webhooks and the Widget CRD's
// conversion) trusts both CAs (PEM): the renewed one and the one it replaces, which signed what the old pods serve.
func checkCABundles(t *testing.T, c client.Client, ns string, cas ...string) {
	t.Helper()
	bundles := map[string][]byte{}
	v := &admissionregistrationv1.ValidatingWebhookConfigurationList{}
	m := &admissionregistrationv1.MutatingWebhookConfigurationList{}
	for _, list := range []client.ObjectList{v, m} {
		if err := c.List(t.Context(), list, client.MatchingLabels{operatorsv1alpha1.LabelAppType: whop}); err != nil {
			t.Fatal(err)
		}
	}
	for _, cfg := range v.Items {
		for _, h := range cfg.Webhooks {
			bundles["ValidatingWebhookConfiguration "+cfg.Name+" "+h.Name] = h.ClientConfig.CABundle
		}
	}
	for _, cfg := range m.Items {
		for _, h := range cfg.Webhooks {
			bundles["MutatingWebhookConfiguration "+cfg.Name+" "+h.Name] = h.ClientConfig.CABundle
		}
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(t.Context(), client.ObjectKey{Name: "widgets." + whop + ".example.com"}, crd); err != nil {
		t.Fatal(err)
	}
	if conv := crd.Spec.Conversion; conv != nil && conv.Webhook != nil && conv.Webhook.ClientConfig != nil {
		bundles["CustomResourceDefinition "+crd.Name+" conversion"] = conv.Webhook.ClientConfig.CABundle
	}
	if len(bundles) != 3 {
		t.Errorf("caBundles of %s: %d, want 3 (validating, mutating, conversion)", whop, len(bundles))
	}
	for where, bundle := range bundles {
		for i, ca := range cas {
			if !strings.Contains(string(bundle), ca) {
				t.Errorf("the caBundle of %s does not trust CA %d of %d", where, i+1, len(cas))
			}
		}
	}
}

// widgetWrites is what writeWidgets saw: writes made, writes that failed, and of those the ones that raced a
// pod's shutdown (first of each kept).
type widgetWrites struct {
	n, failed, raced         int64
	firstFailure, firstRaced string
}

// check fails t when a write failed for any reason but the keep-alive race, or more than races of them did, and
// logs what was seen. The race: kube-apiserver calls webhooks over HTTP/1.1 and does not retry a POST whose
// connection the server closed as idle while the request was on its way; a webhook server closes its idle
// connections when it stops (Go's http.Server.Shutdown), so a write may end in EOF when a pod stops, in any cluster.
// On a real node the same stop has a second face: the pod closes its listener before its endpoint leaves the
// EndpointSlice kube-apiserver dials from, so the call is refused (an operator without a preStop delay).
// Only a rollout stops a pod: races is 1 where one is inherent (an upgrade, the fallback rollout), 0 for a renewal
// in place, where no pod stops.
func (w widgetWrites) check(t *testing.T, what string, races int64) {
	t.Helper()
	t.Logf("writes during %s: %d, failed: %d, of which raced a stopping pod's keep-alive close: %d (%s)", what, w.n, w.failed, w.raced, w.firstRaced)
	if w.n == 0 || w.failed > w.raced || w.raced > races {
		t.Errorf("%d of %d Widget writes failed during %s (%d of them EOF from a stopping pod), want none but at most %d such race (first failure: %s)",
			w.failed, w.n, what, w.raced, races, w.firstFailure)
	}
}

// writeWidgets creates Widgets every 50ms until the returned function is called, which says what happened to them:
// a write fails when it is refused or not mutated by the webhook.
func writeWidgets(t *testing.T, c client.Client, ns string) func() widgetWrites {
	var mu sync.Mutex
	var seen widgetWrites
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ctx.Err() == nil; i++ {
			w := widget(ns, fmt.Sprintf("during-%d", i), "v1")
			err := c.Create(ctx, w)
			if ctx.Err() != nil {
				return
			}
			mu.Lock()
			seen.n++
			if err != nil || !strings.HasPrefix(w.GetLabels()["mutated-by"], "webhook-operator-") {
				seen.failed++
				what := fmt.Sprintf("Widget during-%d: %v, labels %v", i, err, w.GetLabels())
				if seen.firstFailure == "" {
					seen.firstFailure = what
				}
				if err != nil && strings.Contains(err.Error(), "failed to call webhook") &&
					(strings.HasSuffix(err.Error(), ": EOF") || strings.Contains(err.Error(), "connect: connection refused")) {
					seen.raced++
					if seen.firstRaced == "" {
						seen.firstRaced = what
					}
				}
			}
			mu.Unlock()
			time.Sleep(50 * time.Millisecond)
		}
	})
	return func() widgetWrites {
		stop()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

func secretValue(t *testing.T, c client.Client, key client.ObjectKey, field string) string {
	t.Helper()
	s := &corev1.Secret{}
	if err := c.Get(t.Context(), key, s); err != nil {
		t.Fatal(err)
	}
	return string(s.Data[field])
}

func waitSecretChanged(t *testing.T, c client.Client, key client.ObjectKey, field, old string) string {
	t.Helper()
	var now string
	harness.Eventually(t, time.Minute, func() error {
		s := &corev1.Secret{}
		if err := c.Get(t.Context(), key, s); err != nil {
			return err
		}
		if now = string(s.Data[field]); now == old {
			return fmt.Errorf("Secret %s: %s not renewed yet", key, field)
		}
		return nil
	})
	return now
}

// waitRolledOut waits until the Deployment's pods are those of the template that carries cert's hash, all
// available: the operator serves the renewed certificate.
func waitRolledOut(t *testing.T, c client.Client, ns, name, cert string) {
	t.Helper()
	sum := sha256.Sum256([]byte(cert))
	want := hex.EncodeToString(sum[:])[:16]
	harness.Eventually(t, time.Minute, func() error {
		d := &appsv1.Deployment{}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
			return err
		}
		got := d.Spec.Template.Annotations["operators.alm.dev/serving-cert-hash"]
		st := d.Status
		if got != want || st.ObservedGeneration < d.Generation || st.UpdatedReplicas != st.Replicas || st.AvailableReplicas != st.Replicas || st.Replicas == 0 {
			return fmt.Errorf("Deployment %s/%s: certificate hash %q (want %q), status %+v", ns, name, got, want, st)
		}
		return nil
	})
}

// renewalTime is when the PEM certificate cert is due for renewal: two thirds into its validity.
func renewalTime(t *testing.T, cert string) time.Time {
	t.Helper()
	block, _ := pem.Decode([]byte(cert))
	if block == nil {
		t.Fatalf("not a PEM certificate: %q", cert)
	}
	x, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return x.NotBefore.Add(x.NotAfter.Sub(x.NotBefore) * 2 / 3)
}
