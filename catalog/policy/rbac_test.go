package policy

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func rule(groups, resources, verbs []string, names ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: groups, Resources: resources, Verbs: verbs, ResourceNames: names}
}

var (
	rbacGroup = []string{rbacv1.GroupName}
	star      = []string{"*"}
)

// TestEscalatingRule: a rule escalates when it grants, by name or through `*` verbs, resources or groups, escalate or
// bind on roles or clusterroles, or impersonation of users, groups, ServiceAccounts, nodes, UIDs or user extras, as
// Kubernetes' authorizer would match it (validation.Covers); a verb spelled escalate on a resource Kubernetes never
// asks it of grants nothing.
func TestEscalatingRule(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule rbacv1.PolicyRule
		want string
	}{
		{"escalate and bind spelled out", rule(rbacGroup, []string{"roles"}, []string{"escalate", "bind"}), "escalate, bind"},
		{"* verbs on clusterroles", rule(rbacGroup, []string{"clusterroles"}, star), "escalate, bind"},
		{"* verbs on every RBAC resource", rule(rbacGroup, []string{"clusterroles", "clusterrolebindings", "roles", "rolebindings"}, star), "escalate, bind"},
		{"escalate on * resources of the rbac group", rule(rbacGroup, star, []string{"escalate"}), "escalate"},
		{"bind on roles of * groups", rule(star, []string{"roles"}, []string{"bind"}), "bind"},
		{"bind on one named role", rule(rbacGroup, []string{"clusterroles"}, []string{"bind"}, "cluster-admin"), "bind"},
		{"* verbs on bindings only", rule(rbacGroup, []string{"rolebindings", "clusterrolebindings"}, star), ""},
		{"create and update on roles", rule(rbacGroup, []string{"roles", "clusterroles"}, []string{"create", "update", "patch"}), ""},
		{"impersonate serviceaccounts", rule([]string{""}, []string{"serviceaccounts"}, []string{"impersonate"}), "impersonate"},
		{"* verbs on users", rule([]string{""}, []string{"users", "groups"}, star), "impersonate"},
		{"* verbs on uids", rule([]string{"authentication.k8s.io"}, []string{"uids"}, star), "impersonate"},
		{"impersonate a user extra", rule([]string{"authentication.k8s.io"}, []string{"userextras/scopes"}, []string{"impersonate"}), "impersonate"},
		{"impersonate any subresource's extra", rule([]string{"authentication.k8s.io"}, []string{"*/scopes"}, []string{"impersonate"}), "impersonate"},
		{"constrained impersonation of ServiceAccounts", rule([]string{""}, []string{"serviceaccounts"}, []string{"impersonate:serviceaccount"}), "impersonate"},
		{"impersonate on every resource of every group", rule(star, star, []string{"impersonate"}), "impersonate"},
		{"impersonate on a custom resource", rule([]string{"example.com"}, []string{"widgets"}, []string{"impersonate"}), ""},
		{"every verb on the core group's * resources", rule([]string{""}, star, star), "impersonate"},
		{"every verb on everything is the wildcard rule's", rule(star, star, star), ""},
		{"non-resource URLs", rbacv1.PolicyRule{NonResourceURLs: star, Verbs: star}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, asked := range []string{"first", "again (remembered)"} {
				if got := EscalatingRule(tc.rule); got != tc.want {
					t.Errorf("EscalatingRule(%+v), asked %s = %q, want %q", tc.rule, asked, got, tc.want)
				}
			}
		})
	}
}

// TestEscalatingRuleMemoTellsRulesApart: a remembered answer is given only for the same rule. A benign rule whose
// strings, joined, spell a dangerous one's fields does not answer for it.
func TestEscalatingRuleMemoTellsRulesApart(t *testing.T) {
	for _, pair := range [][2]rbacv1.PolicyRule{
		{rule(rbacGroup, []string{"roles"}, []string{"get,escalate"}), rule(rbacGroup, []string{"roles"}, []string{"get", "escalate"})},
		{rule(rbacGroup, []string{"roles"}, []string{`get" "escalate`}), rule(rbacGroup, []string{"roles"}, []string{"get", "escalate"})},
		{rule(rbacGroup, []string{"roles bind"}, nil), rule(rbacGroup, []string{"roles"}, []string{"bind"})},
		{rule([]string{"rbac.authorization.k8s.io", "roles"}, nil, []string{"bind"}), rule(rbacGroup, []string{"roles"}, []string{"bind"})},
	} {
		benign, dangerous := pair[0], pair[1]
		if got := EscalatingRule(benign); got != "" {
			t.Fatalf("EscalatingRule(%+v) = %q, want none", benign, got)
		}
		if got := EscalatingRule(dangerous); got == "" {
			t.Errorf("EscalatingRule(%+v) after %+v = none: the benign rule's answer was given for it", dangerous, benign)
		}
	}
}

func TestWildcardRule(t *testing.T) {
	for _, tc := range []struct {
		rule rbacv1.PolicyRule
		want bool
	}{
		{rule(star, star, star), true},
		{rule(star, star, star, "x"), true},
		{rule(star, star, []string{"get"}), false},
		{rule(rbacGroup, star, star), false},
	} {
		if got := WildcardRule(tc.rule); got != tc.want {
			t.Errorf("WildcardRule(%+v) = %v, want %v", tc.rule, got, tc.want)
		}
	}
}

func rbacObject(kind, name string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
		"metadata": map[string]any{"name": name}}}
	for k, v := range fields {
		u.Object[k] = v
	}
	return u
}

// TestPrivilegedBinding: bindings to cluster-admin, admin, edit and system:* roles are privileged; view and a role
// of the bundle's own are not.
func TestPrivilegedBinding(t *testing.T) {
	ref := func(kind, name string) map[string]any {
		return map[string]any{"roleRef": map[string]any{"apiGroup": rbacv1.GroupName, "kind": kind, "name": name}}
	}
	for _, tc := range []struct {
		obj  *unstructured.Unstructured
		want string
	}{
		{rbacObject("ClusterRoleBinding", "b", ref("ClusterRole", "cluster-admin")), "ClusterRole cluster-admin"},
		{rbacObject("RoleBinding", "b", ref("ClusterRole", "admin")), "ClusterRole admin"},
		{rbacObject("RoleBinding", "b", ref("ClusterRole", "edit")), "ClusterRole edit"},
		{rbacObject("ClusterRoleBinding", "b", ref("ClusterRole", "system:controller:clusterrole-aggregation-controller")), "ClusterRole system:controller:clusterrole-aggregation-controller"},
		{rbacObject("RoleBinding", "b", ref("Role", "system:controller:bootstrap-signer")), "Role system:controller:bootstrap-signer"},
		{rbacObject("RoleBinding", "b", ref("ClusterRole", "view")), ""},
		{rbacObject("RoleBinding", "b", ref("Role", "admin")), ""}, // a Role of the namespace named admin is not Kubernetes'
		{rbacObject("ClusterRoleBinding", "b", ref("ClusterRole", "my-operator")), ""},
		{rbacObject("ClusterRole", "cluster-admin", nil), ""},
	} {
		if got := PrivilegedBinding(tc.obj); got != tc.want {
			t.Errorf("PrivilegedBinding(%s %v) = %q, want %q", tc.obj.GetKind(), tc.obj.Object["roleRef"], got, tc.want)
		}
	}
}

func TestAggregatedRole(t *testing.T) {
	selects := map[string]any{"aggregationRule": map[string]any{"clusterRoleSelectors": []any{
		map[string]any{"matchLabels": map[string]any{"kubernetes.io/bootstrapping": "rbac-defaults"}}}}}
	for _, tc := range []struct {
		obj  *unstructured.Unstructured
		want bool
	}{
		{rbacObject("ClusterRole", "gather", selects), true},
		{rbacObject("ClusterRole", "empty", map[string]any{"aggregationRule": map[string]any{"clusterRoleSelectors": []any{}}}), false},
		{rbacObject("ClusterRole", "plain", map[string]any{"rules": []any{}}), false},
	} {
		if got := AggregatedRole(tc.obj); got != tc.want {
			t.Errorf("AggregatedRole(%s) = %v, want %v", tc.obj.GetName(), got, tc.want)
		}
	}
}
