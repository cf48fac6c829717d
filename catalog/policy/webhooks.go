package policy

import (
	"fmt"
	"slices"

	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// RuleWildcardWebhook: an admission webhook that intercepts every resource of every API group with failurePolicy
// Fail (the default), so that while it is down nothing in the cluster can be written.
const RuleWildcardWebhook = "wildcard-webhook"

// WebhookError names what makes a ClusterServiceVersion's webhook definition (spec.webhookdefinitions[i])
// uninstallable, "" when it is installable: its type, deploymentName (one of deployments), containerPort,
// webhookPath, sideEffects, admissionReviewVersions, and the conversionCRDs of a conversion webhook (one of owned).
func WebhookError(w opv1alpha1.WebhookDescription, deployments, owned []string) string {
	switch {
	case w.GenerateName == "":
		return "generateName is empty"
	case w.Type != opv1alpha1.ValidatingAdmissionWebhook && w.Type != opv1alpha1.MutatingAdmissionWebhook && w.Type != opv1alpha1.ConversionWebhook:
		return fmt.Sprintf("type %q is not one of %s, %s, %s", w.Type, opv1alpha1.ValidatingAdmissionWebhook, opv1alpha1.MutatingAdmissionWebhook, opv1alpha1.ConversionWebhook)
	case !slices.Contains(deployments, w.DeploymentName):
		return fmt.Sprintf("deploymentName %q names no Deployment of the install strategy (%v)", w.DeploymentName, deployments)
	case w.ContainerPort < 0 || w.ContainerPort > 65535:
		return fmt.Sprintf("containerPort %d is not a port number", w.ContainerPort)
	case w.WebhookPath == nil || *w.WebhookPath == "" || (*w.WebhookPath)[0] != '/':
		return "webhookPath must be an absolute path such as /validate"
	case len(w.AdmissionReviewVersions) == 0:
		return "admissionReviewVersions is empty"
	}
	if w.Type == opv1alpha1.ConversionWebhook {
		if len(w.ConversionCRDs) == 0 {
			return "conversionCRDs is empty"
		}
		for _, crd := range w.ConversionCRDs {
			if !slices.Contains(owned, crd) {
				return fmt.Sprintf("conversionCRDs names %s, which is not a CRD of the bundle", crd)
			}
		}
		return ""
	}
	if w.SideEffects == nil || (*w.SideEffects != admissionregistrationv1.SideEffectClassNone && *w.SideEffects != admissionregistrationv1.SideEffectClassNoneOnDryRun) {
		return "sideEffects must be None or NoneOnDryRun"
	}
	return ""
}

// WildcardWebhook says whether an admission webhook definition intercepts every resource of every API group and
// fails closed (see WildcardRules); it returns the index of the rule.
func WildcardWebhook(w opv1alpha1.WebhookDescription) (int, bool) {
	if w.Type == opv1alpha1.ConversionWebhook {
		return -1, false
	}
	return WildcardRules(w.Rules, w.FailurePolicy)
}

// WildcardRules says whether admission rules intercept every resource of every API group (a rule whose apiGroups,
// apiVersions and resources are all `*`, or resources `*/*`) while failing closed (failurePolicy Fail, the
// default); it returns the index of the rule.
func WildcardRules(rules []admissionregistrationv1.RuleWithOperations, failurePolicy *admissionregistrationv1.FailurePolicyType) (int, bool) {
	if failurePolicy != nil && *failurePolicy == admissionregistrationv1.Ignore {
		return -1, false
	}
	for i, r := range rules {
		if slices.Contains(r.APIGroups, "*") && slices.Contains(r.APIVersions, "*") &&
			(slices.Contains(r.Resources, "*") || slices.Contains(r.Resources, "*/*")) {
			return i, true
		}
	}
	return -1, false
}
