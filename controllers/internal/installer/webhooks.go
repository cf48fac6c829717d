package installer

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"time"

	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/policy"
	"github.com/almproject/alm/controllers/internal/servingcert"
)

// Where a webhook's serving certificate is mounted in every container of its Deployment, as OLM mounts it:
// controller-runtime's default certificate directory (tls.crt, tls.key) and the aggregated API server's
// (apiserver.crt, apiserver.key).
const (
	WebhookCertDir   = "/tmp/k8s-webhook-server/serving-certs"
	APIServerCertDir = "/apiserver.local.config/certificates"
)

// webhookPlan is what a version's webhooks need besides their objects: certificates, filled in by the installer
// (fillWebhooks) since issuing them reads the Secrets that hold them.
type webhookPlan struct {
	ca               *unstructured.Unstructured // the version's CA Secret
	replacedCASecret string                     // the CA Secret of the version spec.replaces names
	serving          []servingTarget
	caBundles        []caBundleTarget
	renewAt          time.Time
}

// servingTarget is one Service's serving certificate Secret and the Deployment it is mounted in.
type servingTarget struct {
	service    string
	secret     *unstructured.Unstructured
	deployment *unstructured.Unstructured
}

// caBundleTarget is a caBundle field of a planned object (a webhook configuration's webhooks[i].clientConfig, a
// CRD's spec.conversion.webhook.clientConfig).
type caBundleTarget struct {
	obj  *unstructured.Unstructured
	path []string // to the clientConfig; for webhook configurations, of every webhook
}

// CASecretName is the name of the Secret holding the CA of an OperatorVersion's webhooks.
func CASecretName(ovName string) string { return shorten(ovName+"-webhook-ca", 253) }

// ServiceName is the name of the Service of a webhook's Deployment, as OLM names it.
func ServiceName(w opv1alpha1.WebhookDescription) string { return w.DomainName() + "-service" }

// ServingSecretName is the name of the Secret holding a webhook Service's serving certificate, as OLM names it.
func ServingSecretName(service string) string { return service + "-cert" }

// WebhookConfigurationName is the name of the webhook configuration of one webhook definition of a version.
func WebhookConfigurationName(w opv1alpha1.WebhookDescription, namespace, ovName string) string {
	return shorten(w.GenerateName+"-"+namespace+"-"+ovName, 253)
}

// addWebhooks plans ov's webhookdefinitions as OLM installs them (README "Webhooks"): Service, serving certificate
// Secret mounted in the Deployment, the version's CA Secret, webhook configurations and CRD conversion webhooks;
// fillWebhooks adds the certificates. Secrets and Services go before the Deployments, configurations after them.
func (p *Plan) addWebhooks(ov *operatorsv1alpha1.OperatorVersion) error {
	defs := ov.Spec.WebhookDefinitions
	if len(defs) == 0 {
		return nil
	}
	var deployments, crds []string
	for _, d := range ov.Spec.Install.StrategySpec.DeploymentSpecs {
		deployments = append(deployments, d.Name)
	}
	for _, crd := range p.CRDs {
		crds = append(crds, crd.GetName())
	}
	ns := ov.Namespace
	wp := &webhookPlan{}
	if ov.Spec.Replaces != "" {
		wp.replacedCASecret = CASecretName(ov.Spec.Replaces)
	}
	ca := &corev1.Secret{ObjectMeta: meta(ns, CASecretName(ov.Name)), Type: corev1.SecretTypeOpaque}
	var after []runtime.Object
	var order []string
	services := map[string]*corev1.Service{}
	for i := range defs {
		w := defs[i]
		if why := policy.WebhookError(w, deployments, crds); why != "" {
			return invalidf("spec.webhookdefinitions[%d] (%s): %s", i, w.GenerateName, why)
		}
		if w.ContainerPort == 0 {
			w.ContainerPort = 443 // OLM's default
		}
		if services[w.DeploymentName] == nil {
			svc, err := p.webhookService(w, ns)
			if err != nil {
				return err
			}
			services[w.DeploymentName] = svc
			order = append(order, w.DeploymentName)
		}
		addServicePort(services[w.DeploymentName], w)
		switch w.Type {
		case opv1alpha1.ValidatingAdmissionWebhook:
			after = append(after, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: meta("", WebhookConfigurationName(w, ns, ov.Name)),
				Webhooks: []admissionregistrationv1.ValidatingWebhook{w.GetValidatingWebhook(ns, nil, nil)}})
		case opv1alpha1.MutatingAdmissionWebhook:
			after = append(after, &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: meta("", WebhookConfigurationName(w, ns, ov.Name)),
				Webhooks: []admissionregistrationv1.MutatingWebhook{w.GetMutatingWebhook(ns, nil, nil)}})
		case opv1alpha1.ConversionWebhook:
			if err := p.conversion(w, ns, wp); err != nil {
				return err
			}
		}
	}
	before := []runtime.Object{ca}
	for _, dep := range order {
		svc := services[dep]
		before = append(before, svc, &corev1.Secret{ObjectMeta: meta(ns, ServingSecretName(svc.Name)), Type: corev1.SecretTypeTLS})
		wp.serving = append(wp.serving, servingTarget{service: svc.Name, deployment: p.find(deploymentGK.Kind, dep)})
	}
	if err := p.insertWebhookObjects(wp, before, after); err != nil {
		return err
	}
	return p.mountServingCerts()
}

// webhookService is the Service of w's Deployment: its pods, by the Deployment's selector.
func (p *Plan) webhookService(w opv1alpha1.WebhookDescription, ns string) (*corev1.Service, error) {
	dep := p.find(deploymentGK.Kind, w.DeploymentName)
	var d appsv1.Deployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(dep.Object, &d); err != nil {
		return nil, invalidf("Deployment %s: %v", w.DeploymentName, err)
	}
	if d.Spec.Selector == nil || len(d.Spec.Selector.MatchLabels) == 0 {
		return nil, invalidf("spec.install.spec.deployments %s: a webhook's Deployment needs spec.selector.matchLabels for its Service", w.DeploymentName)
	}
	return &corev1.Service{ObjectMeta: meta(ns, ServiceName(w)), Spec: corev1.ServiceSpec{Selector: d.Spec.Selector.MatchLabels}}, nil
}

func addServicePort(svc *corev1.Service, w opv1alpha1.WebhookDescription) {
	for _, port := range svc.Spec.Ports {
		if port.Port == w.ContainerPort {
			return
		}
	}
	target := intstr.FromInt32(w.ContainerPort)
	if w.TargetPort != nil {
		target = *w.TargetPort
	}
	svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: strconv.Itoa(int(w.ContainerPort)), Port: w.ContainerPort, TargetPort: target})
}

// conversion makes the CRDs w names convert through w's Service.
func (p *Plan) conversion(w opv1alpha1.WebhookDescription, ns string, wp *webhookPlan) error {
	for _, name := range w.ConversionCRDs {
		crd := p.find("CustomResourceDefinition", name)
		conv := map[string]any{"strategy": "Webhook", "webhook": map[string]any{
			"conversionReviewVersions": toAny(w.AdmissionReviewVersions),
			"clientConfig": map[string]any{"service": map[string]any{
				"namespace": ns, "name": ServiceName(w), "path": *w.WebhookPath, "port": int64(w.ContainerPort)}},
		}}
		if err := unstructured.SetNestedField(crd.Object, conv, "spec", "conversion"); err != nil {
			return invalidf("CustomResourceDefinition %s: spec.conversion: %v", name, err)
		}
		wp.caBundles = append(wp.caBundles, caBundleTarget{obj: crd, path: []string{"spec", "conversion", "webhook", "clientConfig"}})
	}
	return nil
}

// insertWebhookObjects puts the Secrets and Services before the first Deployment and the webhook configurations at
// the end, and records where certificates go.
func (p *Plan) insertWebhookObjects(wp *webhookPlan, before, after []runtime.Object) error {
	rest := p.Objects
	p.Objects = nil
	i := slices.IndexFunc(rest, func(o *unstructured.Unstructured) bool { return o.GroupVersionKind().GroupKind() == deploymentGK })
	p.Objects = append(p.Objects, rest[:i]...)
	serving := 0
	for _, obj := range before {
		if err := p.add(obj, gvkOf(obj)); err != nil {
			return err
		}
		u := p.Objects[len(p.Objects)-1]
		if s, ok := obj.(*corev1.Secret); ok {
			if s.Type == corev1.SecretTypeOpaque {
				wp.ca = u
			} else {
				wp.serving[serving].secret = u
				serving++
			}
		}
	}
	p.Objects = append(p.Objects, rest[i:]...)
	for _, obj := range after {
		if err := p.add(obj, gvkOf(obj)); err != nil {
			return err
		}
		wp.caBundles = append(wp.caBundles, caBundleTarget{obj: p.Objects[len(p.Objects)-1], path: []string{"webhooks"}})
	}
	p.webhooks = wp
	return nil
}

// mountServingCerts mounts each serving certificate Secret in every container of the Deployment its Service selects.
func (p *Plan) mountServingCerts() error {
	for i := range p.webhooks.serving {
		t := &p.webhooks.serving[i]
		var d appsv1.Deployment
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(t.deployment.Object, &d); err != nil {
			return invalidf("Deployment %s: %v", t.deployment.GetName(), err)
		}
		secret := t.secret.GetName()
		pod := &d.Spec.Template.Spec
		pod.Volumes = append(pod.Volumes,
			corev1.Volume{Name: "webhook-cert", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret,
				Items: []corev1.KeyToPath{{Key: servingcert.KeyTLSCert, Path: "tls.crt"}, {Key: servingcert.KeyTLSKey, Path: "tls.key"}}}}},
			corev1.Volume{Name: "apiservice-cert", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret,
				Items: []corev1.KeyToPath{{Key: servingcert.KeyTLSCert, Path: "apiserver.crt"}, {Key: servingcert.KeyTLSKey, Path: "apiserver.key"}}}}})
		for c := range pod.Containers {
			pod.Containers[c].VolumeMounts = append(pod.Containers[c].VolumeMounts,
				corev1.VolumeMount{Name: "webhook-cert", MountPath: WebhookCertDir},
				corev1.VolumeMount{Name: "apiservice-cert", MountPath: APIServerCertDir})
		}
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&d)
		if err != nil {
			return err
		}
		t.deployment.Object = content
		unstructured.RemoveNestedField(t.deployment.Object, "status")
		unstructured.RemoveNestedField(t.deployment.Object, "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(t.deployment.Object, "spec", "template", "metadata", "creationTimestamp")
	}
	return nil
}

// fillWebhooks issues the certificates of plan's webhooks (servingcert.Issue) from the Secrets that hold them now,
// read through r, and writes them into the planned Secrets and caBundles; each Deployment's pod template records the
// certificate its pods are rolled onto, which changes only on a new Deployment or as the fallback for operators
// that do not reload a renewed certificate (servingcert.Decide; dial reaches the webhook Services). A serving
// Secret that exists is applied last, after every caBundle: a certificate of a renewed CA, which running pods load
// in place, is served only once the webhook configurations and CRDs trust that CA.
func fillWebhooks(ctx context.Context, r client.Reader, ov *operatorsv1alpha1.OperatorVersion, plan *Plan, now time.Time) error {
	wp := plan.webhooks
	if wp == nil {
		return nil
	}
	req := servingcert.Request{Namespace: ov.Namespace, Version: ov.Name, CASecret: wp.ca.GetName(), ReplacedCASecret: wp.replacedCASecret}
	for _, t := range wp.serving {
		req.Services = append(req.Services, servingcert.Service{Name: t.service, Secret: t.secret.GetName(), Deployment: t.deployment.GetName()})
	}
	issued, err := servingcert.Issue(ctx, r, req, now)
	if err != nil {
		return err
	}
	setData(wp.ca, issued.CA.Data())
	for i, t := range wp.serving {
		s := issued.Serving[i]
		setData(t.secret, map[string][]byte{servingcert.KeyTLSCert: s.Cert, servingcert.KeyTLSKey: s.Key, servingcert.KeyCACert: issued.CA.Cert})
		for key, value := range map[string]string{servingcert.AnnotationRolledHash: s.Rolled.Hash, servingcert.AnnotationRolledNotAfter: s.Rolled.NotAfter} {
			_ = unstructured.SetNestedField(t.deployment.Object, value, "spec", "template", "metadata", "annotations", key)
		}
		if s.Existed {
			plan.Objects = append(slices.DeleteFunc(plan.Objects, func(o *unstructured.Unstructured) bool { return o == t.secret }), t.secret)
		}
	}
	bundle := base64.StdEncoding.EncodeToString(issued.CA.Bundle())
	for _, t := range wp.caBundles {
		setCABundle(t, bundle)
	}
	wp.renewAt = issued.At
	return nil
}

func setCABundle(t caBundleTarget, bundle string) {
	if t.path[0] != "webhooks" {
		_ = unstructured.SetNestedField(t.obj.Object, bundle, append(t.path, "caBundle")...)
		return
	}
	hooks, _, _ := unstructured.NestedSlice(t.obj.Object, "webhooks")
	for _, h := range hooks {
		if m, ok := h.(map[string]any); ok {
			_ = unstructured.SetNestedField(m, bundle, "clientConfig", "caBundle")
		}
	}
	_ = unstructured.SetNestedSlice(t.obj.Object, hooks, "webhooks")
}

func setData(secret *unstructured.Unstructured, data map[string][]byte) {
	m := map[string]any{}
	for k, v := range data {
		m[k] = base64.StdEncoding.EncodeToString(v)
	}
	_ = unstructured.SetNestedMap(secret.Object, m, "data")
}

// find returns the planned object of a kind and name (a CRD or a Deployment the definitions were checked to name).
func (p *Plan) find(kind, name string) *unstructured.Unstructured {
	for _, o := range p.All() {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

func gvkOf(obj runtime.Object) schema.GroupVersionKind {
	gvks, _, _ := clientgoscheme.Scheme.ObjectKinds(obj) // Secrets, Services and webhook configurations: always known
	return gvks[0]
}

func toAny(list []string) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s
	}
	return out
}

// renewal shortens requeueAfter so that the installer comes back when a certificate of the plan is due for renewal.
func (p *Plan) renewal(requeueAfter time.Duration, now time.Time) time.Duration {
	if p == nil || p.webhooks == nil || p.webhooks.renewAt.IsZero() {
		return requeueAfter
	}
	until := max(p.webhooks.renewAt.Sub(now), time.Second)
	if requeueAfter == 0 || until < requeueAfter {
		return until
	}
	return requeueAfter
}

// wildcardWebhook names the webhook of a Validating or MutatingWebhookConfiguration that intercepts every resource
// of every API group and fails closed (policy.WildcardRules), e.g. "webhooks[0] (v.example.com) rules[0]"; "" when
// none does.
func wildcardWebhook(obj *unstructured.Unstructured) string {
	if obj.GetKind() != "ValidatingWebhookConfiguration" && obj.GetKind() != "MutatingWebhookConfiguration" {
		return ""
	}
	var cfg admissionregistrationv1.ValidatingWebhookConfiguration // the fields read are the same in both kinds
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &cfg); err != nil {
		return ""
	}
	for i, w := range cfg.Webhooks {
		if r, ok := policy.WildcardRules(w.Rules, w.FailurePolicy); ok {
			return fmt.Sprintf("webhooks[%d] (%s) rules[%d]", i, w.Name, r)
		}
	}
	return ""
}
