package integration

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/loops"
	"github.com/almproject/alm/test/harness"
	"github.com/almproject/alm/test/noderunner"
)

// clock is a time.Now that a test moves forward.
type clock struct{ offset atomic.Int64 }

func (c *clock) Now() time.Time               { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *clock) advance(d time.Duration)      { c.offset.Add(int64(d)) }
func (c *clock) option() func(*loops.Options) { return func(o *loops.Options) { o.Now = c.Now } }

// A webhook operator's certificates are renewed before they expire, with no failed write: the serving certificate,
// then the CA. ALM's clock (loops.Options.Now) is set back so that each is due when ALM next starts, while every
// certificate the webhooks serve to the real kube-apiserver is valid at the real time:
//
//   - installed 500 days ago: CA valid -500..+230 days (due at -13), serving certificate -500..-135 (due at -257);
//   - ALM restarted 250 days ago: the serving certificate is due and renewed (-250..+115, due at -7), the CA is not;
//   - ALM restarted at the real time, while Widgets are written: the CA is due and renewed, the caBundles trust the
//     new and the previous CA, and the serving certificate is issued by the new one and rolled out.
func TestWebhookCertificateRotation(t *testing.T) {
	if os.Getenv("ALM_SKIP_WEBHOOKS") != "" {
		t.Skip("ALM_SKIP_WEBHOOKS")
	}
	images := buildWebhookOperator(t, "1.0.0")
	c := harness.Client(t, cp)
	ns := harness.Namespace(t, c, "rotation")
	runner, err := noderunner.New(noderunner.Options{Config: cp.Config, ImagesDir: images, StateDir: t.TempDir(),
		Namespaces: []string{ns}, ServiceSocket: cp.ServiceSocket, Logger: testr.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := runner.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = runner.Stop() })
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

	// 250 days later: the serving certificate is renewed, the CA kept.
	alm.Stop()
	clk.advance(250 * day)
	alm = startALM(t, "all", clk.option())
	serving = waitSecretChanged(t, c, servingSecret, corev1.TLSCertKey, serving)
	waitRolledOut(t, c, ns, whop+"-operator", serving)
	if now := secretValue(t, c, caSecret, corev1.ServiceAccountRootCAKey); now != ca {
		t.Fatalf("the CA was renewed with the serving certificate; it is not due")
	}
	waitOnlyPod(t, runner, ns, whop+"-operator")
	checkWebhooksNamed(t, c, ns, "1.0.0", "renewed")
	t.Logf("the serving certificate was renewed and the operator's pods serve it; the CA is due at %s", renewalTime(t, ca).Format(time.DateOnly))

	// At the real time, while Widgets are written: the CA is renewed, and the serving certificate with it.
	writes := writeWidgets(t, c, ns)
	alm.Stop()
	clk.advance(-time.Duration(clk.offset.Load()))
	startALM(t, "all", clk.option())
	newCA := waitSecretChanged(t, c, caSecret, corev1.ServiceAccountRootCAKey, ca)
	serving = waitSecretChanged(t, c, servingSecret, corev1.TLSCertKey, serving)
	waitRolledOut(t, c, ns, whop+"-operator", serving)
	checkCABundles(t, c, ns, newCA, ca)
	// The writes go on until the old pod's process has exited: the rollout is over only once nothing serves the
	// old certificate any more.
	waitOnlyPod(t, runner, ns, whop+"-operator")
	checkWebhooksNamed(t, c, ns, "1.0.0", "ca-renewed")
	writes().check(t, "the CA's renewal")
	uninstallWebhookOperator(t, c, ns)
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

// waitOnlyPod waits until the node runner runs exactly one pod of the Deployment and it is not terminating: the
// pods it replaced have stopped.
func waitOnlyPod(t *testing.T, runner *noderunner.Runner, ns, deployment string) {
	t.Helper()
	harness.Eventually(t, time.Minute, func() error {
		var pods []string
		for _, p := range runner.Pods() {
			if p.Namespace == ns && p.Deployment == deployment {
				pods = append(pods, fmt.Sprintf("%s (terminating: %t)", p.Name, p.Terminating))
				if p.Terminating {
					return fmt.Errorf("pods of %s/%s: %v", ns, deployment, pods)
				}
			}
		}
		if len(pods) != 1 {
			return fmt.Errorf("pods of %s/%s: %v, want one", ns, deployment, pods)
		}
		return nil
	})
}

// widgetWrites is what writeWidgets saw: writes made, writes that failed, and of those the ones that raced a
// pod's shutdown (first of each kept).
type widgetWrites struct {
	n, failed, raced         int64
	firstFailure, firstRaced string
}

// check fails t when a write failed for any reason but the keep-alive race, and logs what was seen. The race:
// kube-apiserver calls webhooks over HTTP/1.1 and does not retry a POST whose connection the server closed as
// idle while the request was on its way; a webhook server closes its idle connections when it stops (Go's
// http.Server.Shutdown), so a write may end in EOF when a pod stops, in any cluster. It is counted, and allowed once
// per rollout at most.
func (w widgetWrites) check(t *testing.T, what string) {
	t.Helper()
	t.Logf("writes during %s: %d, failed: %d, of which raced a stopping pod's keep-alive close: %d (%s)", what, w.n, w.failed, w.raced, w.firstRaced)
	if w.n == 0 || w.failed > w.raced || w.raced > 1 {
		t.Errorf("%d of %d Widget writes failed during %s (%d of them EOF from a stopping pod), want none but at most one such race (first failure: %s)",
			w.failed, w.n, what, w.raced, w.firstFailure)
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
				if err != nil && strings.Contains(err.Error(), "failed to call webhook") && strings.HasSuffix(err.Error(), ": EOF") {
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
