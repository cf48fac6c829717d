package policy

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-helpers/auth/rbac/validation"
)

// AnnotationAllowPrefix prefixes the opt-in annotations that allow what ALM refuses by default
// (operators.alm.dev/allow-wildcard-rbac, -rbac-escalation, -privileged-role-binding, -aggregated-clusterrole,
// -privileged-pod, -wildcard-webhook). ALM reads them only from objects a cluster admin controls: the Namespace an
// AppType installs in, and CatalogSources in ALM's own namespace.
const AnnotationAllowPrefix = "operators.alm.dev/allow-"

// OptInHint is the hint of a rule the installer refuses unless a cluster admin opts in.
func OptInHint(rule string) string {
	return fmt.Sprintf("ALM refuses to install it unless a cluster admin annotates the Namespace (or a CatalogSource in "+
		"ALM's namespace, for every package it serves) %s%s: \"true\"", AnnotationAllowPrefix, rule)
}

// FullAuthority is what Kubernetes requires of whoever writes a ClusterRole with an aggregationRule without holding
// escalate: every verb on every resource of every group, and on every non-resource URL (the fullAuthority of
// Kubernetes' ClusterRole storage, pkg/registry/rbac/clusterrole/policybased).
var FullAuthority = []rbacv1.PolicyRule{
	{Verbs: []string{rbacv1.VerbAll}, APIGroups: []string{rbacv1.APIGroupAll}, Resources: []string{rbacv1.ResourceAll}},
	{Verbs: []string{rbacv1.VerbAll}, NonResourceURLs: []string{rbacv1.NonResourceAll}},
}

// WildcardRule reports whether a policy rule grants every verb on every resource of every API group, by Kubernetes'
// own comparator (validation.Covers), or does so for some resource names.
func WildcardRule(r rbacv1.PolicyRule) bool {
	probe := FullAuthority[0]
	if len(r.ResourceNames) > 0 {
		probe.ResourceNames = r.ResourceNames[:1]
	}
	ok, _ := validation.Covers([]rbacv1.PolicyRule{r}, []rbacv1.PolicyRule{probe})
	return ok
}

// escalation is one privilege-escalating permission: verb on resource of group. Holding it lets its holder gain
// permissions it was not given.
type escalation struct{ verb, group, resource string }

// escalations are the permissions that escalate: escalate (write a role granting more than one holds) and bind (bind
// a role one does not hold) on roles and clusterroles, and impersonation of users, groups, ServiceAccounts, nodes,
// UIDs and user extras, with the legacy verb and the constrained impersonation verbs of Kubernetes 1.35
// (k8s.io/apiserver/pkg/endpoints/filters/impersonation).
var escalations = func() []escalation {
	var out []escalation
	for _, v := range []string{"escalate", "bind"} {
		for _, r := range []string{"roles", "clusterroles"} {
			out = append(out, escalation{v, rbacv1.GroupName, r})
		}
	}
	for _, v := range []string{"impersonate", "impersonate:user-info", "impersonate:serviceaccount", "impersonate:arbitrary-node", "impersonate:associated-node"} {
		for _, r := range []string{"users", "groups", "serviceaccounts", "nodes"} {
			out = append(out, escalation{v, "", r})
		}
		for _, r := range []string{"uids", "userextras"} {
			out = append(out, escalation{v, "authentication.k8s.io", r})
		}
	}
	return out
}()

// EscalatingRule names the privilege-escalating verbs a policy rule grants, spelled out or through `*` verbs,
// resources or groups, judged by Kubernetes' comparator: the rule is broken down (validation.BreakdownRule) and each
// part asked whether it covers (validation.Covers) one of the escalating permissions, for the resource names and
// user-extra keys the part names. A rule that grants `*` on `*` is the wildcard rule's; empty when it grants none.
// The answer is remembered (escalatingMemo).
func EscalatingRule(r rbacv1.PolicyRule) string {
	key := ruleKey(r)
	escalatingMemo.Lock()
	verbs, ok := escalatingMemo.m[key]
	escalatingMemo.Unlock()
	if ok {
		return verbs
	}
	verbs = escalatingRule(r)
	escalatingMemo.Lock()
	defer escalatingMemo.Unlock()
	if len(escalatingMemo.m) >= maxMemo {
		clear(escalatingMemo.m)
	}
	escalatingMemo.m[key] = verbs
	return verbs
}

// escalatingMemo holds EscalatingRule's answers by rule (ruleKey). The installer asks for every rule of a bundle's
// Roles and ClusterRoles at each step of every install, a bundle's rules are the same in all its installs, and one
// answer costs a comparison per part of the rule and escalating permission, each allocating. It forgets everything
// once it holds maxMemo rules, so that no catalog makes it grow without bound.
var escalatingMemo = struct {
	sync.Mutex
	m map[string]string
}{m: map[string]string{}}

const maxMemo = 4096

// ruleKey is a rule's fields, each quoted: two rules have the same key only when they are the same rule, whatever
// their strings hold (a verb with a comma or quote in it cannot pass for two verbs).
func ruleKey(r rbacv1.PolicyRule) string {
	return fmt.Sprintf("%q%q%q%q%q", r.Verbs, r.APIGroups, r.Resources, r.ResourceNames, r.NonResourceURLs)
}

func escalatingRule(r rbacv1.PolicyRule) string {
	if WildcardRule(r) {
		return ""
	}
	var verbs []string
	for _, part := range validation.BreakdownRule(r) {
		if len(part.Resources) == 0 {
			continue // a non-resource URL
		}
		for _, e := range escalations {
			probe := rbacv1.PolicyRule{Verbs: []string{e.verb}, APIGroups: []string{e.group}, Resources: []string{e.resource}, ResourceNames: part.ResourceNames}
			if e.resource == "userextras" { // impersonating an extra asks for userextras/<key>
				_, key, ok := strings.Cut(part.Resources[0], "/")
				if !ok {
					key = "key"
				}
				probe.Resources = []string{"userextras/" + key}
			}
			verb, _, _ := strings.Cut(e.verb, ":")
			if ok, _ := validation.Covers([]rbacv1.PolicyRule{part}, []rbacv1.PolicyRule{probe}); ok && !slices.Contains(verbs, verb) {
				verbs = append(verbs, verb)
			}
		}
	}
	slices.SortFunc(verbs, func(a, b string) int { return slices.Index(verbOrder, a) - slices.Index(verbOrder, b) })
	return strings.Join(verbs, ", ")
}

var verbOrder = []string{"escalate", "bind", "impersonate"}

// role decodes obj as a Role or ClusterRole (a Role has the fields rules of a ClusterRole); nil for other kinds.
func role(obj *unstructured.Unstructured) *rbacv1.ClusterRole {
	if obj.GroupVersionKind().Group != rbacv1.GroupName || (obj.GetKind() != "Role" && obj.GetKind() != "ClusterRole") {
		return nil
	}
	var r rbacv1.ClusterRole
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &r); err != nil {
		return nil
	}
	return &r
}

// WildcardRole finds the first rule of a Role or ClusterRole that grants `*` on `*` (WildcardRule): its index; -1
// when there is none.
func WildcardRole(obj *unstructured.Unstructured) int {
	if r := role(obj); r != nil {
		return slices.IndexFunc(r.Rules, WildcardRule)
	}
	return -1
}

// EscalatingRole finds the first rule of a Role or ClusterRole that grants privilege-escalating verbs
// (EscalatingRule): its index and the verbs; "" when there is none.
func EscalatingRole(obj *unstructured.Unstructured) (int, string) {
	if r := role(obj); r != nil {
		for i, rule := range r.Rules {
			if verbs := EscalatingRule(rule); verbs != "" {
				return i, verbs
			}
		}
	}
	return -1, ""
}

// AggregatedRole reports whether obj is a ClusterRole with an aggregationRule that selects anything: its rules are
// those of every ClusterRole its selectors match, now or later, whatever the bundle says (Kubernetes lets only
// holders of escalate or FullAuthority write one).
func AggregatedRole(obj *unstructured.Unstructured) bool {
	r := role(obj)
	return r != nil && obj.GetKind() == "ClusterRole" && r.AggregationRule != nil && len(r.AggregationRule.ClusterRoleSelectors) > 0
}

// aggregateToPrefix starts the labels by which Kubernetes' aggregated ClusterRoles (admin, edit, view) select the
// ClusterRoles whose rules they gather.
const aggregateToPrefix = "rbac.authorization.k8s.io/aggregate-to-"

// AggregatesBeyond finds, for a ClusterRole labelled rbac.authorization.k8s.io/aggregate-to-<role>: "true", the first
// rule that reaches beyond the API groups of the custom resources a bundle ships (groups): a non-resource URL, `*`,
// or any other group, Kubernetes' own included. It returns the label and the rule's index; "" and -1 when the role
// aggregates into no other role or only grants on the bundle's own kinds (as operators add their kinds to view and
// edit). Such a label pushes the rules to everyone bound to admin, edit or view, so a bundle that labels a role to
// grant them Secrets or Pods widens what every namespace admin, editor or viewer holds.
func AggregatesBeyond(obj *unstructured.Unstructured, groups map[string]bool) (string, int) {
	r := role(obj)
	if r == nil || obj.GetKind() != "ClusterRole" {
		return "", -1
	}
	var label string
	for _, k := range slices.Sorted(maps.Keys(obj.GetLabels())) {
		if strings.HasPrefix(k, aggregateToPrefix) && obj.GetLabels()[k] == "true" {
			label = k
			break
		}
	}
	if label == "" {
		return "", -1
	}
	for i, rule := range r.Rules {
		if len(rule.NonResourceURLs) > 0 {
			return label, i
		}
		for _, g := range rule.APIGroups {
			if !groups[g] {
				return label, i
			}
		}
	}
	return "", -1
}

// privilegedRoles are the ClusterRoles Kubernetes ships that a bundle binds only with an admin's opt-in: cluster-admin
// (everything), admin and edit (everything in a namespace, Secrets and workloads included, that is every
// ServiceAccount's token there); and every role named system:*, Kubernetes' own components' roles.
var privilegedRoles = []string{"cluster-admin", "admin", "edit"}

// PrivilegedBinding names the role a RoleBinding or ClusterRoleBinding binds when it is one of Kubernetes' privileged
// roles (cluster-admin, admin, edit, system:*), e.g. "ClusterRole admin"; "" otherwise.
func PrivilegedBinding(obj *unstructured.Unstructured) string {
	if obj.GroupVersionKind().Group != rbacv1.GroupName || (obj.GetKind() != "RoleBinding" && obj.GetKind() != "ClusterRoleBinding") {
		return ""
	}
	kind, _, _ := unstructured.NestedString(obj.Object, "roleRef", "kind")
	name, _, _ := unstructured.NestedString(obj.Object, "roleRef", "name")
	if (kind == "ClusterRole" && slices.Contains(privilegedRoles, name)) || strings.HasPrefix(name, "system:") {
		return kind + " " + name
	}
	return ""
}
