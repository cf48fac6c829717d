package bundlediff

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/policy"
)

// grant is one RBAC rule granted to one subject: a ServiceAccount of the install strategy's permissions (a Role,
// scope Namespace) or clusterPermissions (a ClusterRole, scope Cluster), or a Role or ClusterRole object of the
// bundle (named by the role).
type grant struct {
	kind, name, scope string
	rule              rbacv1.PolicyRule
}

func (g grant) key() string { return g.kind + "/" + g.name + "/" + describeRule(g.rule) }

// grantsOf lists every RBAC rule a bundle grants.
func grantsOf(m *bundle.Manifests) map[string]grant {
	out := map[string]grant{}
	add := func(g grant) { out[g.key()] = g }
	if m.CSV != nil {
		s := m.CSV.Spec.InstallStrategy.StrategySpec
		for _, p := range s.Permissions {
			for _, r := range p.Rules {
				add(grant{kind: "Role", name: p.ServiceAccountName, scope: almv1alpha1.ScopeNamespace, rule: r})
			}
		}
		for _, p := range s.ClusterPermissions {
			for _, r := range p.Rules {
				add(grant{kind: "ClusterRole", name: p.ServiceAccountName, scope: almv1alpha1.ScopeCluster, rule: r})
			}
		}
	}
	for _, u := range m.Objects {
		if u.GroupVersionKind().Group != rbacv1.GroupName || (u.GetKind() != "Role" && u.GetKind() != "ClusterRole") {
			continue
		}
		var role rbacv1.ClusterRole
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &role); err != nil {
			continue
		}
		scope := almv1alpha1.ScopeNamespace
		if u.GetKind() == "ClusterRole" {
			scope = almv1alpha1.ScopeCluster
		}
		for _, r := range role.Rules {
			add(grant{kind: u.GetKind(), name: u.GetName(), scope: scope, rule: r})
		}
	}
	return out
}

// diffRules lists the rules the newer bundle grants that the older does not (with the policy rule that refuses
// them, if any) and the rules it no longer grants.
func diffRules(older, newer *bundle.Manifests) []almv1alpha1.PreviewChange {
	before, after := grantsOf(older), grantsOf(newer)
	var out []almv1alpha1.PreviewChange
	for _, key := range sortedKeys(after) {
		if _, ok := before[key]; !ok {
			g := after[key]
			out = append(out, almv1alpha1.PreviewChange{Op: almv1alpha1.ChangeAdded, Kind: g.kind, Name: g.name, Scope: g.scope,
				Detail: Clip(describeRule(g.rule)), Refused: refusedRule(g.rule)})
		}
	}
	for _, key := range sortedKeys(before) {
		if _, ok := after[key]; !ok {
			g := before[key]
			out = append(out, almv1alpha1.PreviewChange{Op: almv1alpha1.ChangeRemoved, Kind: g.kind, Name: g.name, Scope: g.scope,
				Detail: Clip(describeRule(g.rule))})
		}
	}
	return out
}

// refusedRule says which hostile-input policy rule the installer refuses a granted rule by, "" when none.
func refusedRule(r rbacv1.PolicyRule) string {
	if policy.WildcardRule(r) {
		return policy.RuleWildcardRBAC + ": grants every verb on every resource of every API group; " + policy.OptInHint(policy.RuleWildcardRBAC)
	}
	if verbs := policy.EscalatingRule(r); verbs != "" {
		return policy.RuleRBACEscalation + ": grants " + verbs + "; " + policy.OptInHint(policy.RuleRBACEscalation)
	}
	return ""
}

// describeRule is a rule in one canonical line: "get, list on apps/deployments [names a, b]"; the lists are
// sorted, so the same rule written in another order is the same rule.
func describeRule(r rbacv1.PolicyRule) string {
	sorted := func(l []string) []string {
		l = slices.Clone(l)
		slices.Sort(l)
		return l
	}
	verbs := strings.Join(sorted(r.Verbs), ",")
	if len(r.NonResourceURLs) > 0 {
		return fmt.Sprintf("%s on URLs %s", verbs, strings.Join(sorted(r.NonResourceURLs), ","))
	}
	var resources []string
	for _, g := range sorted(r.APIGroups) {
		for _, res := range sorted(r.Resources) {
			if g == "" {
				resources = append(resources, res)
			} else {
				resources = append(resources, g+"/"+res)
			}
		}
	}
	s := fmt.Sprintf("%s on %s", verbs, strings.Join(resources, ","))
	if len(r.ResourceNames) > 0 {
		s += " named " + strings.Join(sorted(r.ResourceNames), ",")
	}
	return s
}
