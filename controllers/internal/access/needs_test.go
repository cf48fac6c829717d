package access

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func obj(apiVersion, kind, ns, name string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name}}}
	if ns != "" {
		u.SetNamespace(ns)
	}
	for k, v := range fields {
		u.Object[k] = v
	}
	return u
}

func plural(gvk schema.GroupVersionKind) (string, error) { return strings.ToLower(gvk.Kind) + "s", nil }

func TestNeeds(t *testing.T) {
	secretsRule := map[string]any{"rules": []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"secrets", "pods/log"}, "verbs": []any{"get", "list"}}}}
	ref := func(kind, name string) map[string]any {
		return map[string]any{"roleRef": map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name}}
	}
	const user = "system:serviceaccount:t:sa"
	cases := []struct {
		name    string
		objects []*unstructured.Unstructured
		want    []string // For | alternative | CanI lines, one string per need
	}{
		{name: "plain object: create and update by name",
			objects: []*unstructured.Unstructured{obj("v1", "ConfigMap", "t", "c", nil)},
			want: []string{"ConfigMap t/c |  | kubectl auth can-i create configmaps -n t --as " + user +
				"; kubectl auth can-i update configmaps/c -n t --as " + user}},
		{name: "cluster role: every verb and resource cluster-wide, or escalate",
			objects: []*unstructured.Unstructured{obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "r", secretsRule)},
			want: []string{"ClusterRole r |  | kubectl auth can-i create clusterroles.rbac.authorization.k8s.io --as " + user +
				"; kubectl auth can-i update clusterroles.rbac.authorization.k8s.io/r --as " + user,
				"ClusterRole r grants it | escalate clusterroles | kubectl auth can-i get secrets --as " + user +
					"; kubectl auth can-i list secrets --as " + user + "; kubectl auth can-i get pods --subresource log --as " + user +
					"; kubectl auth can-i list pods --subresource log --as " + user}},
		{name: "binding to a planned role: its rules in the binding's namespace, or bind",
			objects: []*unstructured.Unstructured{obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "r", secretsRule),
				obj("rbac.authorization.k8s.io/v1", "RoleBinding", "t", "b", ref("ClusterRole", "r"))},
			want: []string{"", "",
				"RoleBinding t/b |  | ",
				"RoleBinding t/b grants ClusterRole r | bind clusterroles | kubectl auth can-i get secrets -n t --as " + user +
					"; kubectl auth can-i list secrets -n t --as " + user + "; kubectl auth can-i get pods --subresource log -n t --as " + user +
					"; kubectl auth can-i list pods --subresource log -n t --as " + user}},
		{name: "binding to a role ALM does not install: bind only",
			objects: []*unstructured.Unstructured{obj("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "b", ref("ClusterRole", "cluster-admin"))},
			want:    []string{"", "ClusterRoleBinding b grants ClusterRole cluster-admin |  | kubectl auth can-i bind clusterroles.rbac.authorization.k8s.io/cluster-admin --as " + user}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			needs, err := Needs(tc.objects, plural)
			if err != nil {
				t.Fatal(err)
			}
			if len(needs) != len(tc.want) {
				t.Fatalf("got %d needs, want %d: %+v", len(needs), len(tc.want), needs)
			}
			for i, n := range needs {
				if tc.want[i] == "" {
					continue
				}
				var lines []string
				for _, r := range n.Requests {
					lines = append(lines, r.CanI(user))
				}
				alt := ""
				if n.Alternative != nil {
					alt = n.Alternative.Verb + " " + n.Alternative.Resource
				}
				got := n.For + " | " + alt + " | " + strings.Join(lines, "; ")
				if !strings.HasPrefix(got, tc.want[i]) {
					t.Errorf("need %d:\n got %s\nwant %s", i, got, tc.want[i])
				}
			}
		})
	}
}
