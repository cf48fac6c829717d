package policy

import (
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ObjectKind is a kind of bundle object, besides the ClusterServiceVersion and CRDs, that ALM installs, as OLM does.
type ObjectKind struct {
	schema.GroupKind
	// Optional kinds are installed only when their API is served (their CRDs come from another operator, e.g. the
	// Prometheus operator for ServiceMonitor); otherwise they are skipped and the install goes on.
	Optional bool
}

// installableKinds is the one list of bundle object kinds ALM accepts: the catalog keeps exactly these in a bundle's
// objects and the Install loop applies exactly these.
var installableKinds = []ObjectKind{
	{GroupKind: schema.GroupKind{Kind: "Service"}},
	{GroupKind: schema.GroupKind{Kind: "ConfigMap"}},
	{GroupKind: schema.GroupKind{Kind: "Secret"}},
	{GroupKind: schema.GroupKind{Kind: "ServiceAccount"}},
	{GroupKind: schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "Role"}},
	{GroupKind: schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}},
	{GroupKind: schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}},
	{GroupKind: schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}},
	{GroupKind: schema.GroupKind{Group: "policy", Kind: "PodDisruptionBudget"}},
	{GroupKind: schema.GroupKind{Group: "scheduling.k8s.io", Kind: "PriorityClass"}},
	{GroupKind: schema.GroupKind{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}},
	{GroupKind: schema.GroupKind{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}},
	{GroupKind: schema.GroupKind{Group: "autoscaling.k8s.io", Kind: "VerticalPodAutoscaler"}, Optional: true},
	{GroupKind: schema.GroupKind{Group: "monitoring.coreos.com", Kind: "ServiceMonitor"}, Optional: true},
	{GroupKind: schema.GroupKind{Group: "monitoring.coreos.com", Kind: "PrometheusRule"}, Optional: true},
}

// InstallableKinds returns the bundle object kinds ALM installs besides the ClusterServiceVersion and CRDs.
func InstallableKinds() []ObjectKind {
	return append([]ObjectKind(nil), installableKinds...)
}

// Installable reports whether ALM installs bundle objects of the group and kind, and how.
func Installable(gk schema.GroupKind) (ObjectKind, bool) {
	for _, k := range installableKinds {
		if k.GroupKind == gk {
			return k, true
		}
	}
	return ObjectKind{}, false
}

// InstallableKindNames lists the installable kinds for messages, e.g. "ConfigMap, ClusterRole, ...".
func InstallableKindNames() string {
	names := make([]string, 0, len(installableKinds))
	for _, k := range installableKinds {
		names = append(names, k.Kind)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
