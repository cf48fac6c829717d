package access

import (
	"context"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/component-helpers/auth/rbac/validation"
)

// rbacAuthorizer answers SubjectAccessReviews as Kubernetes' RBAC authorizer does for a subject holding held[""]
// cluster-wide and held[ns] in namespace ns: a request is allowed when the held rules cover it (validation.Covers,
// the comparator of Kubernetes' escalation check).
func rbacAuthorizer(held map[string][]rbacv1.PolicyRule) func(authorizationv1.SubjectAccessReviewSpec) bool {
	return func(s authorizationv1.SubjectAccessReviewSpec) bool {
		var asked rbacv1.PolicyRule
		owner := held[""]
		if n := s.NonResourceAttributes; n != nil {
			asked = rbacv1.PolicyRule{Verbs: []string{n.Verb}, NonResourceURLs: []string{n.Path}}
		} else {
			r := s.ResourceAttributes
			res := r.Resource
			if r.Subresource != "" {
				res += "/" + r.Subresource
			}
			asked = rbacv1.PolicyRule{Verbs: []string{r.Verb}, APIGroups: []string{r.Group}, Resources: []string{res}}
			if r.Name != "" {
				asked.ResourceNames = []string{r.Name}
			}
			if r.Namespace != "" {
				owner = append(append([]rbacv1.PolicyRule{}, owner...), held[r.Namespace]...)
			}
		}
		ok, _ := validation.Covers(owner, []rbacv1.PolicyRule{asked})
		return ok
	}
}

func policyRule(groups, resources, verbs []string, names ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: groups, Resources: resources, Verbs: verbs, ResourceNames: names}
}

// TestCheckMirrorsKubernetes: the escalation rules of Kubernetes v1.35 (pkg/registry/rbac: clusterrole, role,
// clusterrolebinding and rolebinding policybased storage, escalation_check.go), row by row, for an install acting as
// ServiceAccount t/sa. Writing a Role or ClusterRole needs escalate on it, or holding every rule it grants; a
// ClusterRole with an aggregationRule also needs every permission there is ("must have cluster-admin privileges to
// use the aggregationRule"); a binding needs bind on its roleRef (in the binding's namespace) or holding the role's
// rules there. `*` verbs, resources and groups are matched as Kubernetes' comparator matches them.
func TestCheckMirrorsKubernetes(t *testing.T) {
	rbac := []string{rbacv1.GroupName}
	star := []string{"*"}
	// writes lets the ServiceAccount create and update RBAC objects, and nothing else.
	writes := policyRule(rbac, []string{"roles", "clusterroles", "rolebindings", "clusterrolebindings"}, []string{"create", "update"})
	secrets := policyRule([]string{""}, []string{"secrets"}, []string{"get"})
	gather := map[string]any{"aggregationRule": map[string]any{"clusterRoleSelectors": []any{
		map[string]any{"matchLabels": map[string]any{"kubernetes.io/bootstrapping": "rbac-defaults"}}}}}
	rules := func(r ...rbacv1.PolicyRule) map[string]any {
		var out []any
		for _, x := range r {
			out = append(out, map[string]any{"apiGroups": toAny(x.APIGroups), "resources": toAny(x.Resources), "verbs": toAny(x.Verbs)})
		}
		return map[string]any{"rules": out}
	}
	ref := func(kind, name string) map[string]any {
		return map[string]any{"roleRef": map[string]any{"apiGroup": rbacv1.GroupName, "kind": kind, "name": name}}
	}
	clusterRole := func(fields map[string]any) *unstructured.Unstructured {
		return obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "r", fields)
	}
	aggregated := clusterRole(gather)
	readsSecrets := clusterRole(rules(secrets))
	const user = "system:serviceaccount:t:sa"
	cases := []struct {
		name    string
		held    map[string][]rbacv1.PolicyRule
		objects []*unstructured.Unstructured
		missing []string // lines of the refusal; none: allowed
	}{
		{name: "aggregationRule without escalate: refused, it needs every permission",
			held: map[string][]rbacv1.PolicyRule{"": {writes}}, objects: []*unstructured.Unstructured{aggregated},
			missing: []string{"kubectl auth can-i '*' '*.*' --as " + user, "kubectl auth can-i '*' '*' --as " + user}},
		{name: "aggregationRule with * on *.*, which includes escalate on clusterroles",
			held: map[string][]rbacv1.PolicyRule{"": {policyRule(star, star, star)}}, objects: []*unstructured.Unstructured{aggregated}},
		{name: "aggregationRule with escalate on clusterroles",
			held: map[string][]rbacv1.PolicyRule{"": {writes, policyRule(rbac, []string{"clusterroles"}, []string{"escalate"})}}, objects: []*unstructured.Unstructured{aggregated}},
		{name: "aggregationRule with full authority",
			held: map[string][]rbacv1.PolicyRule{"": {policyRule(star, star, star), {Verbs: star, NonResourceURLs: star}}}, objects: []*unstructured.Unstructured{aggregated}},
		{name: "escalate on roles in another namespace does not write a Role in t",
			held:    map[string][]rbacv1.PolicyRule{"": {writes}, "other": {policyRule(rbac, []string{"roles"}, []string{"escalate"})}},
			objects: []*unstructured.Unstructured{obj("rbac.authorization.k8s.io/v1", "Role", "t", "r", rules(secrets))},
			missing: []string{"kubectl auth can-i get secrets -n t --as " + user + "   # Role t/r grants it (or escalate on roles)"}},
		{name: "escalate on roles in t writes a Role granting what the ServiceAccount lacks",
			held:    map[string][]rbacv1.PolicyRule{"": {writes}, "t": {policyRule(rbac, []string{"roles"}, []string{"escalate"})}},
			objects: []*unstructured.Unstructured{obj("rbac.authorization.k8s.io/v1", "Role", "t", "r", rules(secrets))}},
		{name: "* verbs are not covered by every verb spelled out",
			held:    map[string][]rbacv1.PolicyRule{"": {writes, policyRule([]string{""}, []string{"secrets"}, []string{"get", "list", "watch", "create", "update", "patch", "delete"})}},
			objects: []*unstructured.Unstructured{clusterRole(rules(policyRule([]string{""}, []string{"secrets"}, star)))},
			missing: []string{"kubectl auth can-i '*' secrets --as " + user}},
		{name: "* verbs are covered by * verbs",
			held:    map[string][]rbacv1.PolicyRule{"": {writes, policyRule([]string{""}, []string{"secrets"}, star)}},
			objects: []*unstructured.Unstructured{clusterRole(rules(policyRule([]string{""}, []string{"secrets"}, star)))}},
		{name: "* resources are not covered by the resources spelled out",
			held:    map[string][]rbacv1.PolicyRule{"": {writes, policyRule([]string{""}, []string{"secrets", "configmaps"}, []string{"get"})}},
			objects: []*unstructured.Unstructured{clusterRole(rules(policyRule([]string{""}, star, []string{"get"})))},
			missing: []string{"kubectl auth can-i get '*' --as " + user}},
		{name: "* verbs on RBAC objects need * on them, or escalate",
			held:    map[string][]rbacv1.PolicyRule{"": {writes, policyRule(rbac, []string{"clusterroles"}, []string{"get", "create", "update"})}},
			objects: []*unstructured.Unstructured{clusterRole(rules(policyRule(rbac, []string{"clusterroles"}, star)))},
			missing: []string{"kubectl auth can-i '*' clusterroles.rbac.authorization.k8s.io --as " + user}},
		{name: "binding to a shipped role without its rules or bind: refused",
			held:    map[string][]rbacv1.PolicyRule{"": {writes, policyRule(rbac, []string{"clusterroles"}, []string{"escalate"})}},
			objects: []*unstructured.Unstructured{readsSecrets, obj("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "b", ref("ClusterRole", "r"))},
			missing: []string{"kubectl auth can-i get secrets --as " + user + "   # ClusterRoleBinding b grants ClusterRole r (or bind on clusterroles)"}},
		{name: "binding to a shipped role with bind on that role",
			held: map[string][]rbacv1.PolicyRule{"": {writes, policyRule(rbac, []string{"clusterroles"}, []string{"escalate"}),
				policyRule(rbac, []string{"clusterroles"}, []string{"bind"}, "r")}},
			objects: []*unstructured.Unstructured{readsSecrets, obj("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "b", ref("ClusterRole", "r"))}},
		{name: "binding to a shipped role whose rules the ServiceAccount holds in the binding's namespace",
			held:    map[string][]rbacv1.PolicyRule{"": {writes, policyRule(rbac, []string{"clusterroles"}, []string{"escalate"})}, "t": {secrets}},
			objects: []*unstructured.Unstructured{readsSecrets, obj("rbac.authorization.k8s.io/v1", "RoleBinding", "t", "b", ref("ClusterRole", "r"))}},
		{name: "binding to a shipped role with an aggregationRule needs bind or every permission in its scope",
			held:    map[string][]rbacv1.PolicyRule{"": {writes, policyRule(rbac, []string{"clusterroles"}, []string{"escalate"})}, "t": {secrets}},
			objects: []*unstructured.Unstructured{aggregated, obj("rbac.authorization.k8s.io/v1", "RoleBinding", "t", "b", ref("ClusterRole", "r"))},
			missing: []string{"kubectl auth can-i '*' '*.*' -n t --as " + user + "   # RoleBinding t/b grants ClusterRole r, whose aggregationRule can gather any permission (or bind on clusterroles)"}},
		{name: "binding to a shipped role with an aggregationRule, with bind on it",
			held: map[string][]rbacv1.PolicyRule{"": {writes, policyRule(rbac, []string{"clusterroles"}, []string{"escalate"})},
				"t": {policyRule(rbac, []string{"clusterroles"}, []string{"bind"}, "r")}},
			objects: []*unstructured.Unstructured{aggregated, obj("rbac.authorization.k8s.io/v1", "RoleBinding", "t", "b", ref("ClusterRole", "r"))}},
		{name: "bind on the roleRef: a RoleBinding to view with bind on view in t",
			held:    map[string][]rbacv1.PolicyRule{"": {writes}, "t": {policyRule(rbac, []string{"clusterroles"}, []string{"bind"}, "view")}},
			objects: []*unstructured.Unstructured{obj("rbac.authorization.k8s.io/v1", "RoleBinding", "t", "b", ref("ClusterRole", "view"))}},
		{name: "bind on another role is not bind on the roleRef",
			held:    map[string][]rbacv1.PolicyRule{"": {writes}, "t": {policyRule(rbac, []string{"clusterroles"}, []string{"bind"}, "view")}},
			objects: []*unstructured.Unstructured{obj("rbac.authorization.k8s.io/v1", "RoleBinding", "t", "b", ref("ClusterRole", "admin"))},
			missing: []string{"kubectl auth can-i bind clusterroles.rbac.authorization.k8s.io/admin -n t --as " + user}},
		{name: "bind in a namespace does not bind cluster-wide",
			held:    map[string][]rbacv1.PolicyRule{"": {writes}, "t": {policyRule(rbac, []string{"clusterroles"}, []string{"bind"}, "view")}},
			objects: []*unstructured.Unstructured{obj("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "b", ref("ClusterRole", "view"))},
			missing: []string{"kubectl auth can-i bind clusterroles.rbac.authorization.k8s.io/view --as " + user}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var n int
			c := authorizer(rbacAuthorizer(tc.held), &n)
			why, err := (&Checker{Client: c, Reader: c}).Check(context.Background(), "t", "sa", tc.objects, plural)
			if err != nil {
				t.Fatal(err)
			}
			if (why == "") != (len(tc.missing) == 0) {
				t.Fatalf("refusal %q, want missing %v", why, tc.missing)
			}
			for _, m := range tc.missing {
				if !strings.Contains(why, m) {
					t.Errorf("refusal does not list %q:\n%s", m, why)
				}
			}
		})
	}
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}
