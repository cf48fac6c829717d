package installer

import (
	"context"
	"errors"
	"strings"
	"testing"

	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/internal/access"
	"github.com/almproject/alm/test/harness"
)

var wildcard = rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}

// everyResourceWebhook adds a validating webhook on every resource of every group with the failure policy.
func everyResourceWebhook(policy *admissionregistrationv1.FailurePolicyType) func(*operatorsv1alpha1.OperatorVersion) {
	return func(o *operatorsv1alpha1.OperatorVersion) {
		o.Spec.WebhookDefinitions = append(o.Spec.WebhookDefinitions, opv1alpha1.WebhookDescription{
			Type: opv1alpha1.ValidatingAdmissionWebhook, GenerateName: "vall.example.com", DeploymentName: "demo-operator",
			WebhookPath: ptr.To("/validate"), AdmissionReviewVersions: []string{"v1"}, SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone),
			FailurePolicy: policy, Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{"*"},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*/*"}}}},
		})
	}
}

func addObject(o *operatorsv1alpha1.OperatorVersion, json string) {
	o.Spec.Objects = append(o.Spec.Objects, runtime.RawExtension{Raw: []byte(json)})
}

func podSpec(o *operatorsv1alpha1.OperatorVersion) *corev1.PodSpec {
	return &o.Spec.Install.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec
}

const (
	adminBinding = `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"%s","metadata":{"name":"demo-admin"},` +
		`"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},"subjects":[{"kind":"ServiceAccount","name":"demo-operator"}]}`
	aggregatedRole = `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"gather"},` +
		`"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"kubernetes.io/bootstrapping":"rbac-defaults"}}]}}`
	builtinCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"roles.rbac.authorization.k8s.io"},` +
		`"spec":{"group":"rbac.authorization.k8s.io","names":{"kind":"Role","plural":"roles"},"scope":"Namespaced","versions":[]}}`
)

// TestPolicy: what the installer refuses by default, the message (object, field, rule, opt-in annotation), and the
// opt-in. A refusal is an InvalidError: the OperatorVersion fails and nothing is applied. Every row is listed under
// "Hostile inputs" in the top-level README.
// aggregateToView is a ClusterRole demo-view labelled to aggregate into Kubernetes' view role, with rules (JSON).
func aggregateToView(rules string) string {
	return `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"demo-view",` +
		`"labels":{"rbac.authorization.k8s.io/aggregate-to-view":"true"}},"rules":[` + rules + `]}`
}

func TestPolicy(t *testing.T) {
	cases := []struct {
		name   string
		allow  map[string]string // the opt-ins of the admin's objects
		mutate func(*operatorsv1alpha1.OperatorVersion)
		want   []string // substrings of the refusal; none: the plan is accepted
	}{
		{"webhook on every resource, failurePolicy Fail", nil, everyResourceWebhook(nil),
			[]string{"ValidatingWebhookConfiguration vall.example.com-ns-demo.v1.0.0: webhooks[0] (vall.example.com) rules[0] intercepts every resource", "rule wildcard-webhook", `operators.alm.dev/allow-wildcard-webhook: "true"`}},
		{"webhook on every resource allowed", map[string]string{"operators.alm.dev/allow-wildcard-webhook": "true"}, everyResourceWebhook(nil), nil},
		{"webhook on every resource, failurePolicy Ignore", nil, everyResourceWebhook(ptr.To(admissionregistrationv1.Ignore)), nil},
		{"wildcard permissions", nil, func(o *operatorsv1alpha1.OperatorVersion) {
			o.Spec.Install.StrategySpec.Permissions[0].Rules = append(o.Spec.Install.StrategySpec.Permissions[0].Rules, wildcard)
		}, []string{"Role ns/demo.v1.0.0-demo-operator: rules[1] grants every verb", "rule wildcard-rbac", `operators.alm.dev/allow-wildcard-rbac: "true"`}},
		{"wildcard permissions allowed", map[string]string{"operators.alm.dev/allow-wildcard-rbac": "true"}, func(o *operatorsv1alpha1.OperatorVersion) {
			o.Spec.Install.StrategySpec.Permissions[0].Rules = append(o.Spec.Install.StrategySpec.Permissions[0].Rules, wildcard)
		}, nil},
		{"wildcard allowed only by \"true\"", map[string]string{"operators.alm.dev/allow-wildcard-rbac": "yes"}, func(o *operatorsv1alpha1.OperatorVersion) {
			o.Spec.Install.StrategySpec.Permissions[0].Rules = append(o.Spec.Install.StrategySpec.Permissions[0].Rules, wildcard)
		}, []string{"rule wildcard-rbac"}},
		{"wildcard cluster permissions", nil, func(o *operatorsv1alpha1.OperatorVersion) {
			o.Spec.Install.StrategySpec.ClusterPermissions[0].Rules = []rbacv1.PolicyRule{wildcard}
		}, []string{"ClusterRole alm:ns:demo.v1.0.0:demo-operator: rules[0]", "rule wildcard-rbac"}},
		{"wildcard ClusterRole object", nil, func(o *operatorsv1alpha1.OperatorVersion) {
			addObject(o, `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"everything"},"rules":[{"apiGroups":["*"],"resources":["*"],"verbs":["*"]}]}`)
		}, []string{"ClusterRole everything: rules[0]", "rule wildcard-rbac"}},
		{"cluster-admin ClusterRoleBinding", nil, func(o *operatorsv1alpha1.OperatorVersion) {
			addObject(o, strings.Replace(adminBinding, "%s", "ClusterRoleBinding", 1))
		}, []string{"ClusterRoleBinding demo-admin: roleRef binds ClusterRole cluster-admin", "rule privileged-role-binding",
			`operators.alm.dev/allow-privileged-role-binding: "true" on the Namespace (kubectl annotate namespace ns operators.alm.dev/allow-privileged-role-binding=true), or on a CatalogSource in ALM's namespace`,
			"the AppType's and a tenant CatalogSource's annotations do not count"}},
		{"admin RoleBinding", nil, func(o *operatorsv1alpha1.OperatorVersion) {
			addObject(o, strings.Replace(strings.Replace(adminBinding, "%s", "RoleBinding", 1), `"name":"cluster-admin"`, `"name":"admin"`, 1))
		}, []string{"RoleBinding ns/demo-admin: roleRef binds ClusterRole admin", "rule privileged-role-binding"}},
		{"edit RoleBinding", nil, func(o *operatorsv1alpha1.OperatorVersion) {
			addObject(o, strings.Replace(strings.Replace(adminBinding, "%s", "RoleBinding", 1), `"name":"cluster-admin"`, `"name":"edit"`, 1))
		}, []string{"RoleBinding ns/demo-admin: roleRef binds ClusterRole edit", "rule privileged-role-binding"}},
		{"system: ClusterRoleBinding", nil, func(o *operatorsv1alpha1.OperatorVersion) {
			addObject(o, strings.Replace(strings.Replace(adminBinding, "%s", "ClusterRoleBinding", 1), `"name":"cluster-admin"`, `"name":"system:kube-controller-manager"`, 1))
		}, []string{"ClusterRoleBinding demo-admin: roleRef binds ClusterRole system:kube-controller-manager", "rule privileged-role-binding"}},
		{"view RoleBinding", nil, func(o *operatorsv1alpha1.OperatorVersion) {
			addObject(o, strings.Replace(strings.Replace(adminBinding, "%s", "RoleBinding", 1), `"name":"cluster-admin"`, `"name":"view"`, 1))
		}, nil},
		{"aggregated ClusterRole", nil, func(o *operatorsv1alpha1.OperatorVersion) { addObject(o, aggregatedRole) },
			[]string{"ClusterRole gather: aggregationRule gathers the rules of every ClusterRole its selectors match", "rule aggregated-clusterrole", "operators.alm.dev/allow-aggregated-clusterrole"}},
		{"aggregated ClusterRole allowed", map[string]string{"operators.alm.dev/allow-aggregated-clusterrole": "true"}, func(o *operatorsv1alpha1.OperatorVersion) {
			addObject(o, aggregatedRole)
		}, nil},
		{"aggregate-to-view with Secrets", nil, func(o *operatorsv1alpha1.OperatorVersion) {
			addObject(o, aggregateToView(`{"apiGroups":["demo.example.com"],"resources":["widgets"],"verbs":["get"]},{"apiGroups":[""],"resources":["secrets"],"verbs":["get"]}`))
		}, []string{"ClusterRole demo-view: label rbac.authorization.k8s.io/aggregate-to-view adds rules[1], which reaches beyond the custom resources",
			"rule aggregate-to-user-roles", "operators.alm.dev/allow-aggregate-to-user-roles"}},
		{"aggregate-to-view with * groups", nil, func(o *operatorsv1alpha1.OperatorVersion) {
			addObject(o, aggregateToView(`{"apiGroups":["*"],"resources":["widgets"],"verbs":["get"]}`))
		}, []string{"rules[0], which reaches beyond", "rule aggregate-to-user-roles"}},
		{"aggregate-to-view with a non-resource URL", nil, func(o *operatorsv1alpha1.OperatorVersion) {
			addObject(o, aggregateToView(`{"nonResourceURLs":["/metrics"],"verbs":["get"]}`))
		}, []string{"rules[0], which reaches beyond", "rule aggregate-to-user-roles"}},
		{"aggregate-to-view of the bundle's own kinds (as operators ship)", nil, func(o *operatorsv1alpha1.OperatorVersion) {
			addObject(o, aggregateToView(`{"apiGroups":["demo.example.com"],"resources":["widgets"],"verbs":["get","list","watch"]}`))
		}, nil},
		{"aggregate-to-view allowed", map[string]string{"operators.alm.dev/allow-aggregate-to-user-roles": "true"}, func(o *operatorsv1alpha1.OperatorVersion) {
			addObject(o, aggregateToView(`{"apiGroups":[""],"resources":["secrets"],"verbs":["get"]}`))
		}, nil},
		{"* verbs on RBAC objects", nil, func(o *operatorsv1alpha1.OperatorVersion) {
			o.Spec.Install.StrategySpec.ClusterPermissions[0].Rules = []rbacv1.PolicyRule{{APIGroups: []string{rbacv1.GroupName},
				Resources: []string{"clusterroles", "clusterrolebindings", "roles", "rolebindings"}, Verbs: []string{"*"}}}
		}, []string{"ClusterRole alm:ns:demo.v1.0.0:demo-operator: rules[0] grants the privilege-escalating verbs escalate, bind", "rule rbac-escalation"}},
		{"escalate on * resources of the RBAC group", nil, func(o *operatorsv1alpha1.OperatorVersion) {
			addObject(o, `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"r"},"rules":[{"apiGroups":["rbac.authorization.k8s.io"],"resources":["*"],"verbs":["escalate","get"]}]}`)
		}, []string{"Role ns/r: rules[0] grants the privilege-escalating verbs escalate", "rule rbac-escalation"}},
		{"impersonate through * verbs on users", nil, func(o *operatorsv1alpha1.OperatorVersion) {
			o.Spec.Install.StrategySpec.ClusterPermissions[0].Rules = []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"users", "groups"}, Verbs: []string{"*"}}}
		}, []string{"rules[0] grants the privilege-escalating verbs impersonate", "rule rbac-escalation"}},
		{"cluster-admin RoleBinding", nil, func(o *operatorsv1alpha1.OperatorVersion) {
			addObject(o, strings.Replace(adminBinding, "%s", "RoleBinding", 1))
		}, []string{"RoleBinding ns/demo-admin: roleRef binds ClusterRole cluster-admin"}},
		{"cluster-admin allowed", map[string]string{"operators.alm.dev/allow-privileged-role-binding": "true"}, func(o *operatorsv1alpha1.OperatorVersion) {
			addObject(o, strings.Replace(adminBinding, "%s", "ClusterRoleBinding", 1))
		}, nil},
		{"privileged container", nil, func(o *operatorsv1alpha1.OperatorVersion) {
			podSpec(o).Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
		}, []string{"Deployment ns/demo-operator: spec.template.spec runs privileged container", "rule privileged-pod", "operators.alm.dev/allow-privileged-pod"}},
		{"hostPath volume", nil, func(o *operatorsv1alpha1.OperatorVersion) {
			podSpec(o).Volumes = append(podSpec(o).Volumes, corev1.Volume{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
		}, []string{"Deployment ns/demo-operator: spec.template.spec runs hostPath volume root (/)", "rule privileged-pod"}},
		{"host network", nil, func(o *operatorsv1alpha1.OperatorVersion) { podSpec(o).HostNetwork = true },
			[]string{"host namespaces", "rule privileged-pod"}},
		{"privileged allowed", map[string]string{"operators.alm.dev/allow-privileged-pod": "true"}, func(o *operatorsv1alpha1.OperatorVersion) {
			podSpec(o).HostNetwork = true
		}, nil},
		{"added capability SYS_ADMIN", nil, func(o *operatorsv1alpha1.OperatorVersion) {
			podSpec(o).Containers[0].SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE", "SYS_ADMIN"}}}
		}, []string{"Deployment ns/demo-operator: spec.template.spec runs container operator adding capabilities SYS_ADMIN", "rule privileged-pod"}},
		{"added capability ALL", nil, func(o *operatorsv1alpha1.OperatorVersion) {
			podSpec(o).Containers[0].SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"ALL"}}}
		}, []string{"adding capabilities ALL", "rule privileged-pod"}},
		{"added capability NET_BIND_SERVICE (baseline)", nil, func(o *operatorsv1alpha1.OperatorVersion) {
			podSpec(o).Containers[0].SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}, Drop: []corev1.Capability{"ALL"}}}
		}, nil},
		{"allowPrivilegeEscalation", nil, func(o *operatorsv1alpha1.OperatorVersion) {
			podSpec(o).Containers[0].SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(true)}
		}, []string{"container operator with allowPrivilegeEscalation: true", "rule privileged-pod"}},
		{"escalate and bind verbs", nil, func(o *operatorsv1alpha1.OperatorVersion) {
			o.Spec.Install.StrategySpec.Permissions[0].Rules = append(o.Spec.Install.StrategySpec.Permissions[0].Rules,
				rbacv1.PolicyRule{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles"}, Verbs: []string{"escalate", "bind"}})
		}, []string{"Role ns/demo.v1.0.0-demo-operator: rules[1] grants the privilege-escalating verbs escalate, bind", "rule rbac-escalation", `operators.alm.dev/allow-rbac-escalation: "true"`}},
		{"impersonate verb", nil, func(o *operatorsv1alpha1.OperatorVersion) {
			o.Spec.Install.StrategySpec.ClusterPermissions[0].Rules = []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: []string{"impersonate"}}}
		}, []string{"ClusterRole alm:ns:demo.v1.0.0:demo-operator: rules[0] grants the privilege-escalating verbs impersonate", "rule rbac-escalation"}},
		{"escalation allowed", map[string]string{"operators.alm.dev/allow-rbac-escalation": "true"}, func(o *operatorsv1alpha1.OperatorVersion) {
			o.Spec.Install.StrategySpec.ClusterPermissions[0].Rules = []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: []string{"impersonate"}}}
		}, nil},
		{"CRD in a built-in group, whatever is allowed", map[string]string{
			"operators.alm.dev/allow-wildcard-rbac": "true", "operators.alm.dev/allow-privileged-role-binding": "true", "operators.alm.dev/allow-privileged-pod": "true",
		}, func(o *operatorsv1alpha1.OperatorVersion) { addObject(o, builtinCRD) },
			[]string{`CustomResourceDefinition roles.rbac.authorization.k8s.io: spec.group "rbac.authorization.k8s.io" is served by Kubernetes itself`, "rule crd-builtin-group"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ov := harness.Demo{Namespace: "ns", Name: "demo.v1.0.0", Version: "1.0.0"}.OperatorVersion()
			c.mutate(ov)
			p, err := NewPlan(ov, scope)
			if err != nil {
				t.Fatal(err)
			}
			err = CheckPolicy(p, ov.Namespace, AllowedFrom(c.allow))
			if c.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var invalid *InvalidError
			if !errors.As(err, &invalid) {
				t.Fatalf("want an InvalidError, got %v", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestObjectInOtherNamespace: a bundle object that names another namespace is installed in the OperatorVersion's.
func TestObjectInOtherNamespace(t *testing.T) {
	ov := harness.Demo{Namespace: "ns", Name: "demo.v1.0.0", Version: "1.0.0"}.OperatorVersion()
	addObject(ov, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"stolen","namespace":"kube-system"}}`)
	p, err := NewPlan(ov, scope)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range p.All() {
		if o.GetName() == "stolen" && o.GetNamespace() != "ns" {
			t.Errorf("Secret stolen planned in namespace %q, want ns", o.GetNamespace())
		}
		if o.GetNamespace() != "" && o.GetNamespace() != "ns" {
			t.Errorf("%s %s planned in namespace %q", o.GetKind(), o.GetName(), o.GetNamespace())
		}
	}
}

// TestConflictNamesTheObject: an object of the plan that exists and is not ALM's (a user's, another package's,
// another namespace's) is a conflict whose message names the object.
func TestConflictNamesTheObject(t *testing.T) {
	ov := harness.Demo{Namespace: "ns", Name: "demo.v1.0.0", Package: "demo", Version: "1.0.0"}.OperatorVersion()
	existing := func(labels map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetKind("ConfigMap")
		u.SetNamespace("ns")
		u.SetName("demo-config")
		u.SetLabels(labels)
		return u
	}
	cases := []struct {
		name   string
		labels map[string]string
		want   string
	}{
		{"user's object", nil, "ConfigMap ns/demo-config exists and was not created by ALM; delete or rename it so that demo.v1.0.0 can install"},
		{"other package", map[string]string{operatorsv1alpha1.LabelAppType: "other"}, "ConfigMap ns/demo-config belongs to package other; package demo cannot install"},
		{"other namespace", map[string]string{operatorsv1alpha1.LabelAppType: "demo", operatorsv1alpha1.LabelOwnerNamespace: "elsewhere"},
			"ConfigMap ns/demo-config belongs to the demo installed in namespace elsewhere"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkOwner(existing(c.labels), ov)
			var conflict *ConflictError
			if !errors.As(err, &conflict) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want a ConflictError %q, got %v", c.want, err)
			}
		})
	}
}

// TestOptInsOnlyFromAdminObjects: the installer lifts a rule only for an opt-in on the Namespace or on the
// CatalogSource the version comes from when that is in ALM's namespace; the OperatorVersion's own annotations (and so
// an AppType's) and a tenant's CatalogSource count for nothing. Nothing is read when the plan breaks no rule.
func TestOptInsOnlyFromAdminObjects(t *testing.T) {
	const allow = "operators.alm.dev/allow-privileged-role-binding"
	yes := map[string]string{allow: "true"}
	cases := []struct {
		name                   string
		namespace, ovs         map[string]string // annotations of the Namespace and of the OperatorVersion
		almCatalog, ownCatalog map[string]string // of alm-system/ops and ns/ops
		source                 string            // namespace of spec.source
		allowed                bool
	}{
		{name: "no opt-in", source: "alm-system"},
		{name: "on the Namespace", namespace: yes, source: "ns", allowed: true},
		{name: "on the Namespace, not \"true\"", namespace: map[string]string{allow: "yes"}, source: "ns"},
		{name: "on the CatalogSource in ALM's namespace", almCatalog: yes, source: "alm-system", allowed: true},
		{name: "on the tenant's own CatalogSource", ownCatalog: yes, source: "ns"},
		{name: "on ALM's CatalogSource, but the version comes from the tenant's", almCatalog: yes, source: "ns"},
		{name: "on the OperatorVersion (or the AppType it was copied from)", ovs: yes, source: "alm-system"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			_ = clientgoscheme.AddToScheme(scheme)
			_ = operatorsv1alpha1.AddToScheme(scheme)
			var reads int
			cl := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Annotations: c.namespace}},
				&operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: "alm-system", Name: "ops", Annotations: c.almCatalog}},
				&operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ops", Annotations: c.ownCatalog}},
			).WithInterceptorFuncs(interceptor.Funcs{Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				reads++
				return cl.Get(ctx, key, obj, opts...)
			}}).Build()
			in := &Installer{Client: cl, Reader: cl, Access: &access.Checker{Policy: access.Policy{Namespace: "alm-system"}}}
			ov := harness.Demo{Namespace: "ns", Name: "demo.v1.0.0", Version: "1.0.0"}.OperatorVersion()
			ov.Annotations, ov.Spec.Source = c.ovs, &operatorsv1alpha1.CatalogReference{Namespace: c.source, Name: "ops"}
			clean, err := NewPlan(ov, scope)
			if err != nil {
				t.Fatal(err)
			}
			if err := in.policy(context.Background(), ov, clean); err != nil || reads != 0 {
				t.Fatalf("a plan breaking no rule: %v, %d reads, want none", err, reads)
			}
			addObject(ov, strings.Replace(adminBinding, "%s", "ClusterRoleBinding", 1))
			p, err := NewPlan(ov, scope)
			if err != nil {
				t.Fatal(err)
			}
			err = in.policy(context.Background(), ov, p)
			if c.allowed != (err == nil) {
				t.Fatalf("allowed %v, want %v (%v)", err == nil, c.allowed, err)
			}
			if err != nil && !strings.Contains(err.Error(), "kubectl annotate namespace ns "+allow+"=true") {
				t.Errorf("refusal does not say where the opt-in goes: %v", err)
			}
		})
	}
}
