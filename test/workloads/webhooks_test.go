package workloads

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/test/harness"
)

const whop = "whop" // the webhook operator's package

// webhookDemo is a version of the webhook operator with a validating, a mutating and a conversion webhook on its
// Widgets (v1 and v2), served on port 9443 behind the Service port 443, as operator-sdk scaffolds them.
func webhookDemo(ns, version, replaces string) harness.Demo {
	rules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{whop + ".example.com"}, APIVersions: []string{"*"}, Resources: []string{"widgets"}},
	}}
	def := func(typ opv1alpha1.WebhookAdmissionType, name, path string) opv1alpha1.WebhookDescription {
		return opv1alpha1.WebhookDescription{Type: typ, GenerateName: name, DeploymentName: whop + "-operator",
			ContainerPort: 443, TargetPort: ptr.To(intstr.FromInt32(9443)), WebhookPath: ptr.To(path),
			AdmissionReviewVersions: []string{"v1"}, SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone),
			FailurePolicy: ptr.To(admissionregistrationv1.Fail), Rules: rules}
	}
	conversion := def(opv1alpha1.ConversionWebhook, "cwidget."+whop+".example.com", "/convert")
	conversion.Rules, conversion.ConversionCRDs = nil, []string{"widgets." + whop + ".example.com"}
	return harness.Demo{Namespace: ns, Package: whop, Name: whop + ".v" + version, Version: version, Replaces: replaces,
		Image: "alm.local/webhook-operator:" + version, CRDVersions: []string{"v1", "v2"},
		Args:  []string{"--webhook-bind-address=:9443"},
		Ports: []corev1.ContainerPort{{Name: "webhook-server", ContainerPort: 9443}},
		Webhooks: []opv1alpha1.WebhookDescription{
			def(opv1alpha1.ValidatingAdmissionWebhook, "vwidget."+whop+".example.com", "/validate"),
			def(opv1alpha1.MutatingAdmissionWebhook, "mwidget."+whop+".example.com", "/mutate"),
			conversion,
		}}
}

func widget(ns, name, version string) *unstructured.Unstructured {
	w := &unstructured.Unstructured{}
	w.SetAPIVersion(whop + ".example.com/" + version)
	w.SetKind("Widget")
	w.SetNamespace(ns)
	w.SetName(name)
	_ = unstructured.SetNestedField(w.Object, "small", "spec", "size")
	return w
}

// checkWebhooks asserts what only the webhooks of version can have done, on objects written to and read from the
// real kube-apiserver: a forbidden Widget is refused with that version's message, an admitted one carries its
// mutated-by label, and one stored as v1 and read as v2 carries its converted-by annotation.
func checkWebhooks(t *testing.T, c client.Client, ns, version string) {
	t.Helper()
	checkWebhooksNamed(t, c, ns, version, strings.ReplaceAll(version, ".", "-"))
}

// checkWebhooksNamed is checkWebhooks with Widgets named after suffix, for a version checked more than once.
func checkWebhooksNamed(t *testing.T, c client.Client, ns, version, suffix string) {
	t.Helper()
	want := "webhook-operator-" + version
	harness.Eventually(t, 30*time.Second, func() error {
		err := c.Create(t.Context(), widget(ns, "forbidden-"+suffix, "v1"))
		if err == nil || !strings.Contains(err.Error(), "webhook-operator "+version+" forbids") {
			return fmt.Errorf("creating a forbidden Widget: %w; want the refusal of webhook-operator %s", err, version)
		}
		t.Logf("kube-apiserver called the validating webhook: %v", err)
		return nil
	})
	name := "ok-" + suffix
	w := widget(ns, name, "v1")
	if err := c.Create(t.Context(), w); err != nil {
		t.Fatalf("creating Widget %s: %v", name, err)
	}
	if got := w.GetLabels()["mutated-by"]; got != want {
		t.Fatalf("Widget %s: label mutated-by %q, want %q", name, got, want)
	}
	t.Logf("kube-apiserver called the mutating webhook: Widget %s/%s labels %v", ns, name, w.GetLabels())
	v2 := &unstructured.Unstructured{}
	v2.SetAPIVersion(whop + ".example.com/v2")
	v2.SetKind("Widget")
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, v2); err != nil {
		t.Fatalf("reading Widget %s as v2: %v", name, err)
	}
	if got := v2.GetAnnotations()["converted-by"]; got != want {
		t.Fatalf("Widget %s read as v2: annotation converted-by %q, want %q", name, got, want)
	}
	t.Logf("kube-apiserver called the conversion webhook: Widget %s/%s as %s, annotations %v", ns, name, v2.GetAPIVersion(), v2.GetAnnotations())
}

// An operator with a validating, a mutating and a conversion webhook, installed from its bundle, runs as a pod on the
// node and the real kube-apiserver calls it through its Service (at the pod's address: --enable-aggregator-routing);
// after an upgrade by replaces the new version answers, and no write failed in between but the one a stopping pod's
// keep-alive close may cause.
func TestWebhooksInstallAndUpgrade(t *testing.T) {
	if os.Getenv("ALM_SKIP_WEBHOOKS") != "" {
		t.Skip("ALM_SKIP_WEBHOOKS")
	}
	pushWebhookOperator(t, "1.0.0", "2.0.0")
	c := harness.Client(t, cp)
	ns := harness.Namespace(t, c, "webhooks")
	logPodsOnFailure(t, ns)
	startALM(t, "all")
	catalogSource(t, c, ns, "ops")
	root := t.TempDir()
	harness.Publish(t, c, harness.WriteBundle(t, root, webhookDemo(ns, "1.0.0", "")), "ops", ns)
	appType(t, c, ns, whop)
	waitAppType(t, c, ns, whop, 2*time.Minute, installed("1.0.0"))
	checkWebhooks(t, c, ns, "1.0.0")

	// Writes go on through the upgrade; each must be admitted and mutated by one version or the other.
	writes := writeWidgets(t, c, ns)
	harness.Publish(t, c, harness.WriteBundle(t, root, webhookDemo(ns, "2.0.0", whop+".v1.0.0")), "ops", ns)
	waitAppType(t, c, ns, whop, 2*time.Minute, installed("2.0.0"))
	harness.WaitGone(t, c, &operatorsv1alpha1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: whop + ".v1.0.0"}}, time.Minute)
	waitOnlyPod(t, c, ns, whop+"-operator") // until 1.0.0's pod has stopped
	writes().check(t, "the upgrade", 1)     // a rollout: the old version's pod stops
	checkWebhooks(t, c, ns, "2.0.0")
	for _, list := range []client.ObjectList{&admissionregistrationv1.ValidatingWebhookConfigurationList{}, &admissionregistrationv1.MutatingWebhookConfigurationList{}} {
		if err := c.List(t.Context(), list, client.MatchingLabels{operatorsv1alpha1.LabelAppType: whop}); err != nil {
			t.Fatal(err)
		}
		var names []string
		switch l := list.(type) {
		case *admissionregistrationv1.ValidatingWebhookConfigurationList:
			for _, i := range l.Items {
				names = append(names, i.Name)
			}
		case *admissionregistrationv1.MutatingWebhookConfigurationList:
			for _, i := range l.Items {
				names = append(names, i.Name)
			}
		}
		if len(names) != 1 || !strings.HasSuffix(names[0], whop+".v2.0.0") {
			t.Errorf("webhook configurations of %s after the upgrade: %v, want only 2.0.0's", whop, names)
		}
	}
	uninstallWebhookOperator(t, c, ns)
}

// uninstallWebhookOperator removes the webhook operator from ns while ALM still runs, and what its install leaves
// in the cluster beyond the namespace, so that the next test installs it afresh: the AppType (its OperatorVersions
// go with it, and ALM's finalizer deletes their webhook configurations), then the Widget CRD, which ALM never deletes.
func uninstallWebhookOperator(t *testing.T, c client.Client, ns string) {
	t.Helper()
	ctx := t.Context()
	at := &operatorsv1alpha1.AppType{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: whop}}
	if err := client.IgnoreNotFound(c.Delete(ctx, at)); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, time.Minute, func() error {
		list := &operatorsv1alpha1.OperatorVersionList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(list.Items) > 0 {
			return fmt.Errorf("%d OperatorVersions left in %s", len(list.Items), ns)
		}
		return nil
	})
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "widgets." + whop + ".example.com"}}
	if err := client.IgnoreNotFound(c.Delete(ctx, crd)); err != nil {
		t.Fatal(err)
	}
	harness.WaitGone(t, c, crd, time.Minute)
}
