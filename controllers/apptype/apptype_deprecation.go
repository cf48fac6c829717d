package apptype

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/deprecation"
)

// setDeprecated sets the Deprecated condition from what the catalog deprecates of the installed bundle (or, with
// nothing installed, the one chosen), the channel and the package. It is left as it was when the package could not
// be resolved: the catalog cannot say.
func setDeprecated(st *operatorsv1alpha1.AppTypeStatus, at *operatorsv1alpha1.AppType, v deprecation.Verdict, resolved bool) {
	if !resolved {
		return
	}
	status, reason, msg := deprecatedCondition(v)
	set(st, at, operatorsv1alpha1.ConditionDeprecated, status, reason, msg)
}

// deprecatedCondition is the Deprecated condition for a verdict: True with the most specific scope's reason and
// every message, or False.
func deprecatedCondition(v deprecation.Verdict) (metav1.ConditionStatus, string, string) {
	if !v.Deprecated() {
		return metav1.ConditionFalse, operatorsv1alpha1.ReasonNotDeprecated, "the catalog deprecates neither the package, its channel nor the installed bundle"
	}
	reason := operatorsv1alpha1.ReasonPackageDeprecated
	switch v[0].Scope {
	case deprecation.ScopeBundle:
		reason = operatorsv1alpha1.ReasonBundleDeprecated
	case deprecation.ScopeChannel:
		reason = operatorsv1alpha1.ReasonChannelDeprecated
	}
	return metav1.ConditionTrue, reason, v.Message()
}
