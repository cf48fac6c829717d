package bundle

import (
	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"

	"github.com/almproject/alm/catalog/policy"
)

// webhookChecks checks spec.webhookdefinitions as the installer does: a definition ALM cannot install is an error
// (rule invalid-webhook), an admission webhook that intercepts every resource and fails closed a warning (rule
// wildcard-webhook: the installer refuses it unless opted in).
func webhookChecks(csv *opv1alpha1.ClusterServiceVersion, file string) []Problem {
	var deployments, owned []string
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		deployments = append(deployments, d.Name)
	}
	for _, crd := range csv.Spec.CustomResourceDefinitions.Owned {
		owned = append(owned, crd.Name)
	}
	var problems []Problem
	for i, w := range csv.Spec.WebhookDefinitions {
		if why := policy.WebhookError(w, deployments, owned); why != "" {
			problems = append(problems, Errorf(file, RuleInvalidWebhook, "fix the field named in the message",
				"spec.webhookdefinitions[%d] (%s): %s", i, w.GenerateName, why))
			continue
		}
		if r, ok := policy.WildcardWebhook(w); ok {
			problems = append(problems, Warnf(file, policy.RuleWildcardWebhook, policy.OptInHint(policy.RuleWildcardWebhook),
				"spec.webhookdefinitions[%d] (%s): rules[%d] intercepts every resource of every API group with failurePolicy Fail", i, w.GenerateName, r))
		}
	}
	return problems
}
