package installer

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"maps"
	"slices"
	"testing"
	"time"

	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/almproject/alm/controllers/internal/servingcert"
	"github.com/almproject/alm/test/harness"
)

// TestWebhookPlan: a validating and a conversion webhook become a Service of the Deployment (port 443 to 9443), a
// CA Secret and a serving certificate Secret mounted where OLM mounts it, a ValidatingWebhookConfiguration and a
// CRD conversion webhook, both calling the Service with the CA's caBundle, and a certificate for the Service's name.
func TestWebhookPlan(t *testing.T) {
	ov := harness.Demo{Namespace: "ns", Name: "demo.v1.0.0", Version: "1.0.0", CRDVersions: []string{"v1", "v2"}, Webhooks: []opv1alpha1.WebhookDescription{
		{Type: opv1alpha1.ValidatingAdmissionWebhook, GenerateName: "vwidget.example.com", DeploymentName: "demo-operator", ContainerPort: 443,
			TargetPort: ptr.To(intstr.FromInt32(9443)), WebhookPath: ptr.To("/validate"), AdmissionReviewVersions: []string{"v1"},
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone)},
		{Type: opv1alpha1.ConversionWebhook, GenerateName: "cwidget.example.com", DeploymentName: "demo-operator", ContainerPort: 443,
			TargetPort: ptr.To(intstr.FromInt32(9443)), WebhookPath: ptr.To("/convert"), AdmissionReviewVersions: []string{"v1"},
			ConversionCRDs: []string{"widgets.demo.example.com"}},
	}}.OperatorVersion()
	plan, err := NewPlan(ov, scope)
	if err != nil {
		t.Fatal(err)
	}
	if err := fillWebhooks(t.Context(), fake.NewClientBuilder().Build(), ov, plan, time.Now()); err != nil {
		t.Fatal(err)
	}
	svc := plan.find("Service", "demo-operator-service")
	if svc == nil {
		t.Fatal("no Service demo-operator-service")
	}
	if ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports"); len(ports) != 1 || ports[0].(map[string]any)["port"] != int64(443) || ports[0].(map[string]any)["targetPort"] != int64(9443) {
		t.Errorf("Service ports %v, want 443 -> 9443", ports)
	}
	secret := plan.find("Secret", "demo-operator-service-cert")
	tlsCert, _, _ := unstructured.NestedString(secret.Object, "data", "tls.crt")
	caData, _, _ := unstructured.NestedString(plan.find("Secret", "demo.v1.0.0-webhook-ca").Object, "data", "ca.crt")
	vwc := plan.find("ValidatingWebhookConfiguration", "vwidget.example.com-ns-demo.v1.0.0")
	hooks, _, _ := unstructured.NestedSlice(vwc.Object, "webhooks")
	bundle, _, _ := unstructured.NestedString(hooks[0].(map[string]any), "clientConfig", "caBundle")
	crdBundle, _, _ := unstructured.NestedString(plan.find("CustomResourceDefinition", "widgets.demo.example.com").Object, "spec", "conversion", "webhook", "clientConfig", "caBundle")
	if bundle == "" || bundle != caData || crdBundle != caData {
		t.Fatalf("caBundles %q (webhook) %q (CRD), want the CA %q", bundle, crdBundle, caData)
	}
	verify(t, tlsCert, caData, "demo-operator-service.ns.svc")
	var d appsv1.Deployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(plan.find("Deployment", "demo-operator").Object, &d); err != nil {
		t.Fatal(err)
	}
	mounts := map[string]bool{}
	for _, m := range d.Spec.Template.Spec.Containers[0].VolumeMounts {
		mounts[m.MountPath] = true
	}
	if !mounts[WebhookCertDir] || !mounts[APIServerCertDir] || d.Spec.Template.Annotations[servingcert.AnnotationRolledHash] == "" {
		t.Errorf("Deployment mounts %v, annotations %v; want %s and %s and the certificate hash", mounts, d.Spec.Template.Annotations, WebhookCertDir, APIServerCertDir)
	}
}

func verify(t *testing.T, certB64, caB64, host string) {
	t.Helper()
	certPEM, _ := base64.StdEncoding.DecodeString(certB64)
	caPEM, _ := base64.StdEncoding.DecodeString(caB64)
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.Fatal("no serving certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: host}); err != nil {
		t.Errorf("serving certificate for %s: %v", host, err)
	}
}

// TestWebhookRenewalInPlace: a serving certificate renewed for a Deployment that exists goes into its Secret with
// the pod template unchanged (no rollout), and the Secret is applied after every caBundle; on install it goes
// before the Deployment that mounts it.
func TestWebhookRenewalInPlace(t *testing.T) {
	ov := harness.Demo{Namespace: "ns", Name: "demo.v1.0.0", Version: "1.0.0", CRDVersions: []string{"v1", "v2"}, Webhooks: []opv1alpha1.WebhookDescription{
		{Type: opv1alpha1.ValidatingAdmissionWebhook, GenerateName: "vwidget.example.com", DeploymentName: "demo-operator", ContainerPort: 443,
			WebhookPath: ptr.To("/validate"), AdmissionReviewVersions: []string{"v1"}, SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone)},
	}}.OperatorVersion()
	index := func(plan *Plan, kind, name string) int {
		return slices.IndexFunc(plan.All(), func(o *unstructured.Unstructured) bool { return o.GetKind() == kind && o.GetName() == name })
	}
	now := time.Now()
	installed, err := NewPlan(ov, scope)
	if err != nil {
		t.Fatal(err)
	}
	if err := fillWebhooks(t.Context(), fake.NewClientBuilder().Build(), ov, installed, now); err != nil {
		t.Fatal(err)
	}
	if s, d := index(installed, "Secret", "demo-operator-service-cert"), index(installed, "Deployment", "demo-operator"); s > d {
		t.Errorf("install: the serving Secret is applied at %d, after the Deployment that mounts it (%d)", s, d)
	}
	var existing []client.Object
	for _, kind := range []string{"Secret", "Deployment"} {
		for _, o := range installed.All() {
			if o.GetKind() == kind {
				existing = append(existing, o.DeepCopy())
			}
		}
	}
	renewed, err := NewPlan(ov, scope)
	if err != nil {
		t.Fatal(err)
	}
	later := now.Add(250 * 24 * time.Hour) // the serving certificate is due, the CA is not
	if err := fillWebhooks(t.Context(), fake.NewClientBuilder().WithObjects(existing...).Build(), ov, renewed, later); err != nil {
		t.Fatal(err)
	}
	cert := func(p *Plan) string {
		s, _, _ := unstructured.NestedString(p.find("Secret", "demo-operator-service-cert").Object, "data", "tls.crt")
		return s
	}
	template := func(p *Plan) map[string]string {
		a, _, _ := unstructured.NestedStringMap(p.find("Deployment", "demo-operator").Object, "spec", "template", "metadata", "annotations")
		return a
	}
	if cert(renewed) == cert(installed) {
		t.Fatal("the serving certificate was not renewed at day 250")
	}
	if !maps.Equal(template(renewed), template(installed)) {
		t.Errorf("renewal: pod template annotations %v, want those of the install %v (renewed in place, no rollout)", template(renewed), template(installed))
	}
	secret := index(renewed, "Secret", "demo-operator-service-cert")
	for _, o := range []struct{ kind, name string }{{"ValidatingWebhookConfiguration", "vwidget.example.com-ns-demo.v1.0.0"}, {"Deployment", "demo-operator"}} {
		if i := index(renewed, o.kind, o.name); i > secret {
			t.Errorf("renewal: the serving Secret is applied at %d, before %s %s (%d); want it after every caBundle", secret, o.kind, o.name, i)
		}
	}
}
