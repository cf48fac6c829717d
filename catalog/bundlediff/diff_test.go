package bundlediff

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/bundle"
)

// b is a small bundle to mutate per case.
type b struct {
	image   string
	args    []string
	env     []corev1.EnvVar
	ns      []rbacv1.PolicyRule
	cluster []rbacv1.PolicyRule
	crds    []*apiextv1.CustomResourceDefinition
	hooks   []opv1alpha1.WebhookDescription
	objects []*unstructured.Unstructured
	sc      *corev1.SecurityContext
}

func base() b {
	return b{image: "op:1.0.0", args: []string{"--sync=1m"}, env: []corev1.EnvVar{{Name: "A", Value: "1"}},
		ns:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}},
		cluster: []rbacv1.PolicyRule{{APIGroups: []string{"example.com"}, Resources: []string{"widgets"}, Verbs: []string{"get"}}},
		crds:    []*apiextv1.CustomResourceDefinition{crd("widgets.example.com", "v1")}}
}

func (x b) manifests() *bundle.Manifests {
	dep := appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "manager", Image: x.image, Args: x.args, Env: x.env, SecurityContext: x.sc}}}}}
	csv := &opv1alpha1.ClusterServiceVersion{Spec: opv1alpha1.ClusterServiceVersionSpec{
		WebhookDefinitions: x.hooks,
		InstallStrategy: opv1alpha1.NamedInstallStrategy{StrategySpec: opv1alpha1.StrategyDetailsDeployment{
			DeploymentSpecs:    []opv1alpha1.StrategyDeploymentSpec{{Name: "op", Spec: dep}},
			Permissions:        []opv1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: "op", Rules: x.ns}},
			ClusterPermissions: []opv1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: "op", Rules: x.cluster}},
		}}}}
	return &bundle.Manifests{CSV: csv, CRDs: x.crds, Objects: x.objects}
}

// crd is a CRD with the versions named, the first the storage version.
func crd(name string, versions ...string) *apiextv1.CustomResourceDefinition {
	c := &apiextv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for i, v := range versions {
		c.Spec.Versions = append(c.Spec.Versions, apiextv1.CustomResourceDefinitionVersion{Name: v, Served: true, Storage: i == 0,
			Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{Type: "object"}}})
	}
	return c
}

func obj(kind, name string, data map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": kind, "metadata": map[string]any{"name": name}}}
	for k, v := range data {
		u.Object[k] = v
	}
	return u
}

func hook(name string, wildcard bool) opv1alpha1.WebhookDescription {
	path := "/validate"
	rule := admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{"CREATE"},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{"example.com"}, APIVersions: []string{"v1"}, Resources: []string{"widgets"}}}
	if wildcard {
		rule.Rule = admissionregistrationv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}}
	}
	return opv1alpha1.WebhookDescription{GenerateName: name, Type: opv1alpha1.ValidatingAdmissionWebhook, DeploymentName: "op",
		WebhookPath: &path, Rules: []admissionregistrationv1.RuleWithOperations{rule}}
}

// line is one change in a compact form: "<op> <kind> <name> [<scope>] <detail> !<refused>".
func line(c almv1alpha1.PreviewChange) string {
	s := fmt.Sprintf("%s %s %s", c.Op, c.Kind, c.Name)
	if c.Scope != "" {
		s += " [" + c.Scope + "]"
	}
	if c.Detail != "" {
		s += " " + c.Detail
	}
	if c.Refused != "" {
		s += " !" + strings.SplitN(c.Refused, ":", 2)[0]
	}
	return s
}

func TestDiff(t *testing.T) {
	escalate := rbacv1.PolicyRule{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles"}, Verbs: []string{"escalate", "get"}}
	wildcard := rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}
	for _, tc := range []struct {
		name    string
		change  func(*b)
		summary string
		want    []string // every change, lists in order objects, RBAC rules, CRDs, webhooks
	}{
		{name: "same bundle", change: func(*b) {}, summary: "no changes, 0 refused"},
		{name: "new image", change: func(x *b) { x.image = "op:1.1.0" }, summary: "~1 Deployment (image), 0 refused",
			want: []string{"Changed Deployment op container manager: image op:1.0.0 -> op:1.1.0"}},
		{name: "args and env", change: func(x *b) {
			x.args = []string{"--sync=2m"}
			x.env = []corev1.EnvVar{{Name: "A", Value: "2"}, {Name: "B", Value: "x"}}
		}, summary: "~1 Deployment (args, env), 0 refused",
			want: []string{`Changed Deployment op container manager: args ["--sync=1m"] -> ["--sync=2m"], env ~A +B`}},
		{name: "a cluster rule that escalates is refused", change: func(x *b) { x.cluster = append(x.cluster, escalate) },
			summary: "+1 RBAC rule, 1 refused",
			want:    []string{"Added ClusterRole op [Cluster] escalate,get on rbac.authorization.k8s.io/clusterroles !rbac-escalation"}},
		{name: "a wildcard rule replaces a namespaced one", change: func(x *b) { x.ns = []rbacv1.PolicyRule{wildcard} },
			summary: "+1 RBAC rule, -1 RBAC rule, 1 refused",
			want: []string{"Added Role op [Namespace] * on */* !wildcard-rbac",
				"Removed Role op [Namespace] get,list on configmaps"}},
		{name: "the same rule in another order is no change", change: func(x *b) {
			x.ns = []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list", "get"}}}
		}, summary: "no changes, 0 refused"},
		{name: "a CRD drops its stored version", change: func(x *b) { x.crds = []*apiextv1.CustomResourceDefinition{crd("widgets.example.com", "v2")} },
			summary: "~1 CRD, 1 refused",
			want:    []string{"Changed CustomResourceDefinition widgets.example.com versions v1 (storage) -> v2 (storage); unsafe !CRD widgets.example.com"}},
		{name: "a CRD adds a version and another CRD is added", change: func(x *b) {
			x.crds = []*apiextv1.CustomResourceDefinition{crd("widgets.example.com", "v1", "v2"), crd("gadgets.example.com", "v1")}
		}, summary: "+1 CRD, ~1 CRD, 0 refused",
			want: []string{"Added CustomResourceDefinition gadgets.example.com versions v1 (storage)",
				"Changed CustomResourceDefinition widgets.example.com versions v1 (storage) -> v1 (storage), v2; safe: keeps stored version v1"}},
		{name: "a removed CRD stays", change: func(x *b) { x.crds = nil }, summary: "-1 CRD, 0 refused",
			want: []string{"Removed CustomResourceDefinition widgets.example.com no longer in the bundle; ALM never deletes a CRD: it and its objects stay"}},
		{name: "webhooks", change: func(x *b) { x.hooks = []opv1alpha1.WebhookDescription{hook("all.example.com", true)} },
			summary: "+1 webhook, 1 refused",
			want:    []string{"Added ValidatingAdmissionWebhook all.example.com served by Deployment op at /validate, rules CREATE * !wildcard-webhook"}},
		{name: "a privileged container is refused", change: func(x *b) { x.sc = &corev1.SecurityContext{Privileged: ptr.To(true)} },
			summary: "~1 Deployment (spec), 1 refused",
			want:    []string{"Changed Deployment op container manager: other fields !privileged-pod"}},
		{name: "a binding to cluster-admin is refused", change: func(x *b) {
			x.objects = []*unstructured.Unstructured{{Object: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
				"metadata": map[string]any{"name": "op-admin"}, "roleRef": map[string]any{"kind": "ClusterRole", "name": "cluster-admin"}}}}
		}, summary: "+1 object, 1 refused",
			want: []string{"Added ClusterRoleBinding op-admin !privileged-role-binding"}},
		{name: "objects", change: func(x *b) {
			x.objects = []*unstructured.Unstructured{obj("Service", "op-metrics", nil),
				obj("ConfigMap", "op-config", map[string]any{"data": map[string]any{"a": "2"}})}
		}, summary: "+2 objects, 0 refused",
			want: []string{"Added ConfigMap op-config", "Added Service op-metrics"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			older, newer := base(), base()
			tc.change(&newer)
			res := Diff(older.manifests(), newer.manifests())
			var got []string
			for _, l := range [][]almv1alpha1.PreviewChange{res.Objects, res.RBACRules, res.CRDs, res.Webhooks} {
				for _, c := range l {
					got = append(got, line(c))
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if s := res.Summary(); s != tc.summary {
				t.Errorf("summary %q, want %q", s, tc.summary)
			}
		})
	}
}

func TestDiffObjectChangedAndRemoved(t *testing.T) {
	older, newer := base(), base()
	older.objects = []*unstructured.Unstructured{obj("ConfigMap", "a", map[string]any{"data": map[string]any{"k": "1"}}), obj("Service", "gone", nil)}
	newer.objects = []*unstructured.Unstructured{obj("ConfigMap", "a", map[string]any{"data": map[string]any{"k": "2"}})}
	res := Diff(older.manifests(), newer.manifests())
	if len(res.Objects) != 2 || line(res.Objects[0]) != "Changed ConfigMap a" || line(res.Objects[1]) != "Removed Service gone" {
		t.Fatalf("objects %+v", res.Objects)
	}
	if s := res.Summary(); s != "~1 object, -1 object, 0 refused" {
		t.Errorf("summary %q", s)
	}
}

// TestPreviewIsBounded: each list holds at most MaxPreviewItems, refused changes first; More counts the rest and
// the summary counts them all.
func TestPreviewIsBounded(t *testing.T) {
	older, newer := base(), base()
	for i := 0; i < 14; i++ {
		newer.cluster = append(newer.cluster, rbacv1.PolicyRule{APIGroups: []string{"a"}, Resources: []string{fmt.Sprintf("r%02d", i)}, Verbs: []string{"get"}})
	}
	newer.cluster = append(newer.cluster, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"users"}, Verbs: []string{"impersonate"}})
	p := Diff(older.manifests(), newer.manifests()).Preview("1.0.0", "1.1.0")
	if len(p.RBACRules) != almv1alpha1.MaxPreviewItems || p.More != 5 {
		t.Fatalf("%d rules listed, more %d", len(p.RBACRules), p.More)
	}
	if p.RBACRules[0].Refused == "" {
		t.Errorf("the refused rule is not listed first: %+v", p.RBACRules[0])
	}
	if p.Summary != "+15 RBAC rules, 1 refused" || p.From != "1.0.0" || p.To != "1.1.0" {
		t.Errorf("preview %q %s -> %s", p.Summary, p.From, p.To)
	}
	var out bytes.Buffer
	Write(&out, "op", p)
	if !strings.Contains(out.String(), "and 5 more") || !strings.Contains(out.String(), "REFUSED: rbac-escalation") {
		t.Errorf("Write:\n%s", out.String())
	}
}

func TestClip(t *testing.T) {
	long := strings.Repeat("é", 600) // 1200 bytes
	got := Clip(long)
	if len(got) > 1024 || !strings.HasSuffix(got, " …") || !utf8.ValidString(got) || Clip("short") != "short" {
		t.Errorf("Clip: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
}
