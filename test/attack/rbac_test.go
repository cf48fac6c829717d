package attack

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/test/harness"
)

var every = []string{"get", "list", "watch", "create", "update", "patch", "delete"}

// publisherRules let a tenant publish a ConfigMap catalog, declare AppTypes and install a namespaced bundle in its
// namespace: the kinds of harness.Demo's namespaced bundle, and the ConfigMap permissions its Role grants.
var publisherRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"configmaps", "services", "serviceaccounts"}, Verbs: every},
	{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: every},
	{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles", "rolebindings"}, Verbs: every},
	{APIGroups: []string{operatorsv1alpha1.GroupVersion.Group}, Resources: []string{"catalogsources", "apptypes"}, Verbs: every},
	{APIGroups: []string{operatorsv1alpha1.GroupVersion.Group}, Resources: []string{"operatorversions"}, Verbs: []string{"get", "list", "watch"}},
}

// clusterRBACWriter lets a tenant create ClusterRoles and ClusterRoleBindings, with no escalate or bind.
var clusterRBACWriter = []rbacv1.PolicyRule{
	{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles", "clusterrolebindings"}, Verbs: every},
}

var selectsClusterAdmin = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
	{MatchLabels: map[string]string{"kubernetes.io/bootstrapping": "rbac-defaults"}}}}

// catalog creates the ConfigMap CatalogSource namespace/name with annotations, as c.
func catalog(t *testing.T, c client.Client, namespace, name string, annotations map[string]string) {
	t.Helper()
	cs := &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Annotations: annotations},
		Spec: operatorsv1alpha1.CatalogSourceSpec{DisplayName: "attack " + name, ConfigMap: &operatorsv1alpha1.ConfigMapSource{}}}
	if err := c.Create(t.Context(), cs); err != nil {
		t.Fatal(err)
	}
}

// publish writes a namespaced demo bundle of pkg with extra objects and cluster rules, and stores it in the ConfigMap
// catalog catalogName of namespace, as c.
func publish(t *testing.T, c client.Client, namespace, catalogName, pkg string, clusterRules []rbacv1.PolicyRule, extra ...map[string]any) {
	t.Helper()
	d := harness.Demo{Package: pkg, Name: pkg + ".v1.0.0", Version: "1.0.0", Namespaced: true, ClusterRules: clusterRules, ExtraObjects: extra}
	harness.Publish(t, c, harness.WriteBundle(t, t.TempDir(), d), catalogName, namespace)
}

// declare creates AppType pkg in namespace as c, annotated (nil: none), acting as serviceAccount ("" : none).
func declare(t *testing.T, c client.Client, namespace, pkg, serviceAccount string, annotations map[string]string) {
	t.Helper()
	at := &operatorsv1alpha1.AppType{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: pkg, Annotations: annotations},
		Spec: operatorsv1alpha1.AppTypeSpec{Package: pkg, ServiceAccountName: serviceAccount}}
	if err := c.Create(t.Context(), at); err != nil {
		t.Fatal(err)
	}
}

// failed waits until OperatorVersion <pkg>.v1.0.0 in namespace is Failed with reason, and returns its message.
func failed(t *testing.T, c client.Client, namespace, pkg, reason string) string {
	t.Helper()
	ov := &operatorsv1alpha1.OperatorVersion{}
	harness.Eventually(t, 60*time.Second, func() error {
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: pkg + ".v1.0.0"}, ov); err != nil {
			return err
		}
		if ov.Status.Phase != operatorsv1alpha1.PhaseFailed || ov.Status.Reason != reason {
			return fmt.Errorf("OperatorVersion %s: phase %s reason %s (%s), want Failed %s", ov.Name, ov.Status.Phase, ov.Status.Reason, ov.Status.Message, reason)
		}
		return nil
	})
	if reason == operatorsv1alpha1.ReasonInstallRefused {
		if cond := apimeta.FindStatusCondition(ov.Status.Conditions, operatorsv1alpha1.ConditionAuthorized); cond != nil {
			return cond.Message
		}
	}
	return ov.Status.Message
}

// mustSay fails unless msg contains every want.
func mustSay(t *testing.T, what, msg string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("%s does not say %q:\n%s", what, w, msg)
		}
	}
}

// nothingApplied fails when any RBAC object or Deployment carries the owner label of namespace, or names is a
// ClusterRole or ClusterRoleBinding that exists.
func nothingApplied(t *testing.T, c client.Client, namespace string, names ...string) {
	t.Helper()
	for _, list := range []client.ObjectList{&rbacv1.ClusterRoleList{}, &rbacv1.ClusterRoleBindingList{}, &rbacv1.RoleList{}, &rbacv1.RoleBindingList{}} {
		if err := c.List(t.Context(), list, client.MatchingLabels{operatorsv1alpha1.LabelOwnerNamespace: namespace}); err != nil {
			t.Fatal(err)
		}
		if n := apimeta.LenList(list); n > 0 {
			t.Errorf("%T: %d objects installed for %s, want none", list, n, namespace)
		}
	}
	for _, name := range names {
		for _, obj := range []client.Object{&rbacv1.ClusterRole{}, &rbacv1.ClusterRoleBinding{}} {
			if err := c.Get(t.Context(), client.ObjectKey{Name: name}, obj); !apierrors.IsNotFound(err) {
				t.Errorf("%T %s: %v, want it not to exist", obj, name, err)
			}
		}
	}
}

// aggregatedRole is a bundle ClusterRole whose aggregationRule selects cluster-admin's label, and binding binds it
// to the ServiceAccount namespace/tenant.
func aggregatedRole(name string) map[string]any {
	return map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": name},
		"aggregationRule": map[string]any{"clusterRoleSelectors": []any{map[string]any{"matchLabels": map[string]any{"kubernetes.io/bootstrapping": "rbac-defaults"}}}}}
}

func binding(kind, name, roleName, namespace string) map[string]any {
	return map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": map[string]any{"name": name},
		"roleRef":  map[string]any{"apiGroup": rbacv1.GroupName, "kind": "ClusterRole", "name": roleName},
		"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": "tenant", "namespace": namespace}}}
}

// Attack 2 (issue 34): a tenant ServiceAccount that may create ClusterRoles and ClusterRoleBindings, but holds no
// escalate or bind, ships a ClusterRole whose aggregationRule selects kubernetes.io/bootstrapping: rbac-defaults
// (cluster-admin's label) and a binding of it to itself. Kubernetes refuses the tenant that role; ALM, which holds
// escalate and bind, must refuse it too: by policy (rule aggregated-clusterrole) and, when a cluster admin lifts that
// rule, by the escalation check (every permission there is, or escalate/bind). Nothing is applied. The admin shows
// that such a role does gather cluster-admin's rules here (the clusterrole-aggregation controller runs).
func TestAttackAggregatedClusterRole(t *testing.T) {
	admin := harness.Client(t, cp)
	startALM(t)
	ns, as := tenant(t, "agg", publisherRules, clusterRBACWriter)
	role := "attack-" + ns

	// The attack is real: such a role gathers cluster-admin's `*` on `*`, and Kubernetes refuses it to the tenant.
	proof := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role + "-proof"}, AggregationRule: selectsClusterAdmin}
	if err := admin.Create(t.Context(), proof); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Delete(t.Context(), proof) })
	harness.Eventually(t, 30*time.Second, func() error {
		if err := admin.Get(t.Context(), client.ObjectKeyFromObject(proof), proof); err != nil {
			return err
		}
		for _, r := range proof.Rules {
			if len(r.Verbs) == 1 && r.Verbs[0] == "*" && len(r.Resources) == 1 && r.Resources[0] == "*" && len(r.APIGroups) == 1 && r.APIGroups[0] == "*" {
				return nil
			}
		}
		return fmt.Errorf("ClusterRole %s has %d rules, not yet cluster-admin's * on *.*", proof.Name, len(proof.Rules))
	})
	direct := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role + "-direct"}, AggregationRule: selectsClusterAdmin}
	if err := as.Create(t.Context(), direct); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "aggregationRule") {
		t.Fatalf("the tenant creating an aggregated ClusterRole itself: %v, want Kubernetes' Forbidden", err)
	}

	catalog(t, as, ns, "ops", nil)
	publish(t, as, ns, "ops", "gather", nil, aggregatedRole(role), binding("ClusterRoleBinding", role, role, ns))
	declare(t, as, ns, "gather", "tenant", nil)
	msg := failed(t, admin, ns, "gather", operatorsv1alpha1.ReasonInvalidStrategy)
	mustSay(t, "the refusal", msg, "ClusterRole "+role+": aggregationRule gathers", "rule aggregated-clusterrole",
		"kubectl annotate namespace "+ns+" operators.alm.dev/allow-aggregated-clusterrole=true")
	nothingApplied(t, admin, ns, role)

	// A cluster admin lifts the policy rule for the namespace: the escalation check still refuses, as Kubernetes would.
	annotateNamespace(t, admin, ns, "operators.alm.dev/allow-aggregated-clusterrole")
	publish(t, as, ns, "ops", "gather2", nil, aggregatedRole(role), binding("ClusterRoleBinding", role, role, ns))
	declare(t, as, ns, "gather2", "tenant", nil)
	msg = failed(t, admin, ns, "gather2", operatorsv1alpha1.ReasonInstallRefused)
	user := "system:serviceaccount:" + ns + ":tenant"
	// The binding needs the same cluster-wide `*` (or bind): each missing permission is listed once, for the role.
	mustSay(t, "the refusal", msg, "kubectl auth can-i '*' '*.*' --as "+user, "kubectl auth can-i '*' '*' --as "+user,
		"ClusterRole "+role+" has an aggregationRule")
	t.Logf("the refusal:\n%s", msg)
	nothingApplied(t, admin, ns, role)
}

// annotateNamespace sets the opt-in annotation key: "true" on namespace, as the cluster admin c.
func annotateNamespace(t *testing.T, c client.Client, namespace, key string) {
	t.Helper()
	nsObj := &corev1.Namespace{}
	if err := c.Get(t.Context(), client.ObjectKey{Name: namespace}, nsObj); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(nsObj.DeepCopy())
	if nsObj.Annotations == nil {
		nsObj.Annotations = map[string]string{}
	}
	nsObj.Annotations[key] = "true"
	if err := c.Patch(t.Context(), nsObj, patch); err != nil {
		t.Fatal(err)
	}
}

// Attack 3 (issue 34), in a namespace a cluster admin trusts (ALM installs with its own permissions, which include
// escalate and bind): `verbs: ["*"]` on RBAC objects is refused by rule rbac-escalation, bindings to admin and to a
// system: role by rule privileged-role-binding; the tenant's own opt-ins (on its AppType, on its own CatalogSource)
// change nothing, while a cluster admin's (on the Namespace, on a CatalogSource in ALM's namespace) let them install.
func TestAttackTrustedNamespacePolicy(t *testing.T) {
	admin := harness.Client(t, cp)
	startALM(t)
	ns, as := tenant(t, "trusted", publisherRules, nil)
	nsObj := &corev1.Namespace{}
	if err := admin.Get(t.Context(), client.ObjectKey{Name: ns}, nsObj); err != nil {
		t.Fatal(err)
	}
	nsObj.Labels = map[string]string{operatorsv1alpha1.LabelTrustedInstalls: "true"}
	if err := admin.Update(t.Context(), nsObj); err != nil {
		t.Fatal(err)
	}
	starOnRBAC := []rbacv1.PolicyRule{{APIGroups: []string{rbacv1.GroupName},
		Resources: []string{"clusterroles", "clusterrolebindings", "roles", "rolebindings"}, Verbs: []string{"*"}}}
	const allowEscalation, allowBinding = "operators.alm.dev/allow-rbac-escalation", "operators.alm.dev/allow-privileged-role-binding"
	yes := func(key string) map[string]string { return map[string]string{key: "true"} }

	catalog(t, as, ns, "ops", yes(allowBinding)) // the tenant's own CatalogSource, with the tenant's opt-in
	publish(t, as, ns, "ops", "rbacstar", starOnRBAC)
	publish(t, as, ns, "ops", "bindadmin", nil, binding("RoleBinding", "to-admin", "admin", ns))
	publish(t, as, ns, "ops", "bindsystem", nil, binding("ClusterRoleBinding", "to-system-"+ns, "system:kube-controller-manager", ns))
	declare(t, as, ns, "rbacstar", "", yes(allowEscalation)) // the tenant's opt-in on its AppType
	declare(t, as, ns, "bindadmin", "", yes(allowBinding))
	declare(t, as, ns, "bindsystem", "", nil)
	where := "a cluster admin allows it with the annotation "
	msg := failed(t, admin, ns, "rbacstar", operatorsv1alpha1.ReasonInvalidStrategy)
	mustSay(t, "rbacstar's refusal", msg, "ClusterRole alm:"+ns+":rbacstar.v1.0.0:rbacstar-operator: rules[0] grants the privilege-escalating verbs escalate, bind",
		"rule rbac-escalation", where+allowEscalation, "kubectl annotate namespace "+ns+" "+allowEscalation+"=true", "on a CatalogSource in ALM's namespace")
	msg = failed(t, admin, ns, "bindadmin", operatorsv1alpha1.ReasonInvalidStrategy)
	mustSay(t, "bindadmin's refusal", msg, "RoleBinding "+ns+"/to-admin: roleRef binds ClusterRole admin", "rule privileged-role-binding", where+allowBinding)
	msg = failed(t, admin, ns, "bindsystem", operatorsv1alpha1.ReasonInvalidStrategy)
	mustSay(t, "bindsystem's refusal", msg, "roleRef binds ClusterRole system:kube-controller-manager", "rule privileged-role-binding")
	nothingApplied(t, admin, ns, "to-system-"+ns)

	// The cluster admin's opt-ins: on the Namespace for escalation, on a CatalogSource in ALM's namespace for bindings.
	annotateNamespace(t, admin, ns, allowEscalation)
	publish(t, as, ns, "ops", "rbacstar2", starOnRBAC)
	declare(t, as, ns, "rbacstar2", "", nil)
	adminCatalog := "admin-" + ns
	publish(t, admin, almNamespace, adminCatalog, "bindadmin2-"+ns, nil, binding("RoleBinding", "to-admin", "admin", ns))
	catalog(t, admin, almNamespace, adminCatalog, yes(allowBinding))
	declare(t, as, ns, "bindadmin2-"+ns, "", nil)
	for _, pkg := range []string{"rbacstar2", "bindadmin2-" + ns} {
		harness.WaitPhase(t, admin, ns, pkg+".v1.0.0", operatorsv1alpha1.PhaseSucceeded, 60*time.Second)
	}
	rb := &rbacv1.RoleBinding{}
	if err := admin.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "to-admin"}, rb); err != nil || rb.RoleRef.Name != "admin" {
		t.Errorf("RoleBinding to-admin after the admin's opt-in: %v %v", rb.RoleRef, err)
	}
}
