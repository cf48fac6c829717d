package bundle

import (
	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/almproject/alm/catalog/policy"
)

// Rules of the checks on hostile input that only the catalog makes (see "Hostile inputs" in the README); the others
// are policy's.
const (
	RuleIrregularFile  = "irregular-file"
	RuleOtherNamespace = "other-namespace"
)

// builtinGroupCRDs refuses CRDs in a group Kubernetes serves (even with api-approved.kubernetes.io).
func builtinGroupCRDs(crds []*apiextv1.CustomResourceDefinition, file func(i int) string) []Problem {
	var problems []Problem
	for i, crd := range crds {
		if policy.IsBuiltinGroup(crd.Spec.Group) {
			problems = append(problems, Errorf(file(i), policy.RuleCRDBuiltinGroup, "define the kind in a group of your own domain",
				"CustomResourceDefinition %s: spec.group %q is served by Kubernetes itself", crd.Name, crd.Spec.Group))
		}
	}
	return problems
}

// wildcardPermissions warns about CSV permissions that grant `*` on `*` or privilege-escalating verbs: the
// installer refuses them unless a cluster admin opts in.
func wildcardPermissions(csv *opv1alpha1.ClusterServiceVersion, file string) []Problem {
	var problems []Problem
	spec := csv.Spec.InstallStrategy.StrategySpec
	for _, f := range []struct {
		field string
		perms []opv1alpha1.StrategyDeploymentPermissions
	}{{"permissions", spec.Permissions}, {"clusterPermissions", spec.ClusterPermissions}} {
		for i, perm := range f.perms {
			for j, r := range perm.Rules {
				if policy.WildcardRule(r) {
					problems = append(problems, Warnf(file, policy.RuleWildcardRBAC, policy.OptInHint(policy.RuleWildcardRBAC),
						"ClusterServiceVersion %s: spec.install.spec.%s[%d].rules[%d] grants every verb on every resource of every API group",
						csv.Name, f.field, i, j))
				}
				if verbs := policy.EscalatingRule(r); verbs != "" {
					problems = append(problems, Warnf(file, policy.RuleRBACEscalation, policy.OptInHint(policy.RuleRBACEscalation),
						"ClusterServiceVersion %s: spec.install.spec.%s[%d].rules[%d] grants the privilege-escalating verbs %s",
						csv.Name, f.field, i, j, verbs))
				}
			}
		}
	}
	return problems
}

// objectChecks looks at the bundle's other objects: bindings to privileged roles, aggregated ClusterRoles, roles that
// aggregate into admin, edit or view beyond the API groups of the bundle's CRDs (groups), wildcard and escalating
// Roles, and objects that name a namespace (ALM installs them in the AppType's namespace).
func objectChecks(objects []*unstructured.Unstructured, groups map[string]bool, file func(i int) string) []Problem {
	var problems []Problem
	for i, obj := range objects {
		what := obj.GetKind() + " " + obj.GetName()
		if ns := obj.GetNamespace(); ns != "" {
			problems = append(problems, Warnf(file(i), RuleOtherNamespace, "leave metadata.namespace out of bundle objects",
				"%s: metadata.namespace %q is ignored; ALM installs the object in the AppType's namespace", what, ns))
		}
		if role := policy.PrivilegedBinding(obj); role != "" {
			problems = append(problems, Warnf(file(i), policy.RulePrivilegedBinding, policy.OptInHint(policy.RulePrivilegedBinding),
				"%s: roleRef binds %s", what, role))
		}
		if policy.AggregatedRole(obj) {
			problems = append(problems, Warnf(file(i), policy.RuleAggregatedRole, policy.OptInHint(policy.RuleAggregatedRole),
				"%s: aggregationRule gathers the rules of every ClusterRole its selectors match", what))
		}
		if label, j := policy.AggregatesBeyond(obj, groups); label != "" {
			problems = append(problems, Warnf(file(i), policy.RuleAggregateToUserRoles, policy.OptInHint(policy.RuleAggregateToUserRoles),
				"%s: label %s adds rules[%d], which reaches beyond the bundle's own custom resources, to everyone bound to that role", what, label, j))
		}
		if policy.WildcardRole(obj) >= 0 {
			problems = append(problems, Warnf(file(i), policy.RuleWildcardRBAC, policy.OptInHint(policy.RuleWildcardRBAC),
				"%s: rules grant every verb on every resource of every API group", what))
		}
		if j, verbs := policy.EscalatingRole(obj); verbs != "" {
			problems = append(problems, Warnf(file(i), policy.RuleRBACEscalation, policy.OptInHint(policy.RuleRBACEscalation),
				"%s: rules[%d] grants the privilege-escalating verbs %s", what, j, verbs))
		}
	}
	return problems
}

// privilegedDeployments warns about Deployments of the install strategy whose pods are privileged.
func privilegedDeployments(csv *opv1alpha1.ClusterServiceVersion, file string) []Problem {
	var problems []Problem
	for i, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		if why := policy.PrivilegedPod(&d.Spec.Template.Spec); why != "" {
			problems = append(problems, Warnf(file, policy.RulePrivilegedPod, policy.OptInHint(policy.RulePrivilegedPod),
				"ClusterServiceVersion %s: spec.install.spec.deployments[%d] (%s) runs %s", csv.Name, i, d.Name, why))
		}
	}
	return problems
}
