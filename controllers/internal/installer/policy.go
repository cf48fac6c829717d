package installer

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/almproject/alm/catalog/policy"
)

// Allowed are the rules, among those ALM refuses by default (policy.RuleWildcardRBAC, policy.RuleRBACEscalation,
// policy.RuleClusterAdmin, policy.RulePrivilegedPod), that an OperatorVersion may break.
type Allowed map[string]bool

// AllowedFrom reads the opt-in annotations operators.alm.dev/allow-<rule>: "true". The AppType (for its package) or
// the CatalogSource (for every package it serves) carries them; the OperatorVersions created for the AppType get a
// copy (versions.Create, versions.OptIns), and the installer reads the OperatorVersion's.
func AllowedFrom(annotations map[string]string) Allowed {
	allowed := Allowed{}
	for k, v := range annotations {
		if rule, ok := strings.CutPrefix(k, policy.AnnotationAllowPrefix); ok && v == "true" {
			allowed[rule] = true
		}
	}
	return allowed
}

// CheckPolicy refuses, with an InvalidError naming the object, the field and the rule, a plan that grants `*` on
// `*` or privilege-escalating verbs, binds cluster-admin or runs privileged pods unless allowed, and one with a CRD in a group Kubernetes serves
// (never allowed).
func CheckPolicy(p *Plan, allowed Allowed) error {
	for _, crd := range p.CRDs {
		if group, _, _ := unstructured.NestedString(crd.Object, "spec", "group"); policy.IsBuiltinGroup(group) {
			return invalidf("CustomResourceDefinition %s: spec.group %q is served by Kubernetes itself (rule %s)", crd.GetName(), group, policy.RuleCRDBuiltinGroup)
		}
	}
	for _, obj := range p.Objects {
		what := obj.GetKind() + " " + describe(obj)
		switch {
		case !allowed[policy.RuleWildcardRBAC] && policy.WildcardRole(obj):
			return refused(policy.RuleWildcardRBAC, "%s: rules[%d] grants every verb on every resource of every API group", what, wildcardIndex(obj))
		case !allowed[policy.RuleRBACEscalation] && escalating(obj):
			i, verbs := policy.EscalatingRole(obj)
			return refused(policy.RuleRBACEscalation, "%s: rules[%d] grants the privilege-escalating verbs %s", what, i, verbs)
		case !allowed[policy.RuleWildcardWebhook] && wildcardWebhook(obj) != "":
			return refused(policy.RuleWildcardWebhook, "%s: %s intercepts every resource of every API group with failurePolicy Fail", what, wildcardWebhook(obj))
		case !allowed[policy.RuleClusterAdmin] && policy.BindsClusterAdmin(obj):
			return refused(policy.RuleClusterAdmin, "%s: roleRef binds ClusterRole cluster-admin", what)
		case !allowed[policy.RulePrivilegedPod] && obj.GetKind() == "Deployment":
			var d appsv1.Deployment
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &d); err != nil {
				return invalidf("%s: %v", what, err)
			}
			if why := policy.PrivilegedPod(&d.Spec.Template.Spec); why != "" {
				return refused(policy.RulePrivilegedPod, "%s: spec.template.spec runs %s", what, why)
			}
		}
	}
	return nil
}

func refused(rule, format string, args ...any) error {
	return invalidf("%s (rule %s); annotate the AppType (or its CatalogSource, for every package it serves) %s%s: \"true\" to allow it", fmt.Sprintf(format, args...), rule, policy.AnnotationAllowPrefix, rule)
}

func escalating(obj *unstructured.Unstructured) bool {
	_, verbs := policy.EscalatingRole(obj)
	return verbs != ""
}

// wildcardIndex is the index of the first wildcard rule of a Role or ClusterRole.
func wildcardIndex(obj *unstructured.Unstructured) int {
	var role rbacv1.ClusterRole
	_ = runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &role)
	for i, r := range role.Rules {
		if policy.WildcardRule(r) {
			return i
		}
	}
	return -1
}
