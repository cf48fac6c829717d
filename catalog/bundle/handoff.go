package bundle

import (
	"fmt"
	"time"

	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// AnnotationHandoff on a ClusterServiceVersion says that its operator takes part in its upgrade: "true" (wait
// DefaultHandoffTimeout for its answer) or a duration such as "5m". See OperatorVersionSpec.Handoff.
const AnnotationHandoff = "operators.alm.dev/handoff"

// DefaultHandoffTimeout is how long ALM waits for an operator's hand-over answer when the annotation says "true".
const DefaultHandoffTimeout = 10 * time.Minute

// RuleInvalidHandoff: the handoff annotation is neither "true" nor a positive duration.
const RuleInvalidHandoff = "invalid-handoff"

// handoffTimeout reads the CSV's handoff annotation: 0 without one.
func handoffTimeout(csv *opv1alpha1.ClusterServiceVersion) (time.Duration, error) {
	v, ok := csv.Annotations[AnnotationHandoff]
	if !ok {
		return 0, nil
	}
	return parseHandoff(v)
}

// CheckHandoff says why a handoff annotation's value is not valid; nil when it is.
func CheckHandoff(v string) error {
	_, err := parseHandoff(v)
	return err
}

// parseHandoff reads a handoff annotation's value: "true" or a positive duration.
func parseHandoff(v string) (time.Duration, error) {
	if v == "true" {
		return DefaultHandoffTimeout, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("annotation %s: %q is neither \"true\" nor a positive duration such as 5m", AnnotationHandoff, v)
	}
	return d, nil
}

// addHandoff makes ov take part in its upgrade when its CSV says so: spec.handoff, and for every ServiceAccount its
// Deployments run as, a rule of the install strategy's permissions that lets it read this OperatorVersion and write
// its status, and nothing else (its answer in status.handoff).
func addHandoff(ov *almv1alpha1.OperatorVersion, csv *opv1alpha1.ClusterServiceVersion) error {
	timeout, err := handoffTimeout(csv)
	if err != nil || timeout == 0 {
		return err
	}
	ov.Spec.Handoff = &almv1alpha1.HandoffSpec{Timeout: metav1.Duration{Duration: timeout}}
	rule := rbacv1.PolicyRule{APIGroups: []string{almv1alpha1.GroupVersion.Group}, Resources: []string{"operatorversions", "operatorversions/status"},
		ResourceNames: []string{ov.Name}, Verbs: []string{"get", "patch", "update"}}
	strategy := &ov.Spec.Install.StrategySpec
	for _, d := range strategy.DeploymentSpecs {
		sa := d.Spec.Template.Spec.ServiceAccountName
		if sa == "" {
			sa = "default"
		}
		found := false
		for i := range strategy.Permissions {
			if strategy.Permissions[i].ServiceAccountName == sa {
				strategy.Permissions[i].Rules = append(strategy.Permissions[i].Rules, rule)
				found = true
				break
			}
		}
		if !found {
			strategy.Permissions = append(strategy.Permissions, opv1alpha1.StrategyDeploymentPermissions{ServiceAccountName: sa, Rules: []rbacv1.PolicyRule{rule}})
		}
	}
	return nil
}
