package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/loops"
	"github.com/almproject/alm/test/harness"
)

// trustedOnly runs ALM as a multi-tenant cluster would (--trust-all-namespaces=false).
func trustedOnly(o *loops.Options) { o.TrustedNamespacesOnly = true }

// tenantRules are what an admin lets a team do in its own namespace: the kinds of a namespaced bundle, and RBAC.
var tenantRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets", "services", "serviceaccounts"},
		Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles", "rolebindings"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
}

// tenantServiceAccount creates ServiceAccount ns/name bound to a Role with rules in ns only, and returns the Role.
func tenantServiceAccount(t *testing.T, c client.Client, ns, name string, rules []rbacv1.PolicyRule) *rbacv1.Role {
	t.Helper()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}}}
	for _, obj := range []client.Object{&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, role, binding} {
		if err := c.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	return role
}

func asServiceAccount(name string) func(*operatorsv1alpha1.AppType) {
	return func(at *operatorsv1alpha1.AppType) { at.Spec.ServiceAccountName = name }
}

// refused waits until OperatorVersion ns/name is Failed with InstallRefused and Authorized=False, and returns it.
func refused(t *testing.T, c client.Client, ns, name string, timeout time.Duration) *operatorsv1alpha1.OperatorVersion {
	t.Helper()
	ov := &operatorsv1alpha1.OperatorVersion{}
	harness.Eventually(t, timeout, func() error {
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, ov); err != nil {
			return err
		}
		cond := apimeta.FindStatusCondition(ov.Status.Conditions, operatorsv1alpha1.ConditionAuthorized)
		if ov.Status.Phase != operatorsv1alpha1.PhaseFailed || ov.Status.Reason != operatorsv1alpha1.ReasonInstallRefused || cond == nil || cond.Status != metav1.ConditionFalse {
			return fmt.Errorf("OperatorVersion %s: phase %s reason %s, Authorized %v; want Failed, InstallRefused, Authorized=False", name, ov.Status.Phase, ov.Status.Reason, cond)
		}
		return nil
	})
	return ov
}

// assertNothingOwned fails when any object carries the owner labels of namespace ns.
func assertNothingOwned(t *testing.T, c client.Client, ns string) {
	t.Helper()
	for _, list := range []client.ObjectList{&rbacv1.ClusterRoleList{}, &rbacv1.ClusterRoleBindingList{}, &rbacv1.RoleList{},
		&rbacv1.RoleBindingList{}, &corev1.ServiceAccountList{}, &corev1.ConfigMapList{}, &corev1.ServiceList{}, &appsv1.DeploymentList{}} {
		if err := c.List(t.Context(), list, client.MatchingLabels{operatorsv1alpha1.LabelOwnerNamespace: ns}); err != nil {
			t.Fatal(err)
		}
		if n := apimeta.LenList(list); n > 0 {
			t.Errorf("%T: %d objects owned by a version in %s, want none: nothing may be applied for a refused install", list, n, ns)
		}
	}
}

func logYAML(t *testing.T, what string, v any) {
	t.Helper()
	out, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s:\n%s", what, out)
}

// The escalation of issue 17: a tenant whose ServiceAccount holds rights only in its namespace publishes a bundle
// whose clusterPermissions read every Secret. ALM, which could grant it, refuses: nothing is created, and the
// AppType and OperatorVersion list each missing permission as a kubectl auth can-i line.
func TestTenantEscalationIsRefused(t *testing.T) {
	c := harness.Client(t, cp)
	harness.RunKubelet(t, c, nil)
	startALM(t, "all", trustedOnly)
	ns := harness.Namespace(t, c, "tenant")
	tenantServiceAccount(t, c, ns, "installer", tenantRules)
	catalogSource(t, c, ns, "ops")
	pkg := "secretreader"
	harness.Publish(t, c, harness.WriteBundle(t, t.TempDir(), harness.Demo{Package: pkg, Name: pkg + ".v1.0.0", Version: "1.0.0", Namespaced: true,
		ClusterRules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list"}}}}), "ops", ns)
	appType(t, c, ns, pkg, asServiceAccount("installer"))

	ov := refused(t, c, ns, pkg+".v1.0.0", 60*time.Second)
	user := "system:serviceaccount:" + ns + ":installer"
	msg := apimeta.FindStatusCondition(ov.Status.Conditions, operatorsv1alpha1.ConditionAuthorized).Message
	for _, want := range []string{"kubectl auth can-i get secrets --as " + user, "kubectl auth can-i list secrets --as " + user,
		"kubectl auth can-i create clusterroles.rbac.authorization.k8s.io --as " + user} {
		if !strings.Contains(msg, want) {
			t.Errorf("Authorized message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "configmaps") {
		t.Errorf("Authorized message lists a permission the ServiceAccount holds (configmaps):\n%s", msg)
	}
	at := waitAppType(t, c, ns, pkg, 30*time.Second, func(at *operatorsv1alpha1.AppType) error {
		ready := apimeta.FindStatusCondition(at.Status.Conditions, operatorsv1alpha1.ConditionReady)
		if ready == nil || ready.Status != metav1.ConditionFalse || !strings.Contains(ready.Message, "kubectl auth can-i get secrets --as "+user) {
			return fmt.Errorf("AppType Ready %v, want False listing the missing permissions", ready)
		}
		return nil
	})
	logYAML(t, "kubectl get apptype "+pkg+" -o yaml (status.conditions)", at.Status.Conditions)
	logYAML(t, "kubectl get ov "+ov.Name+" -o yaml (status)", ov.Status)
	assertNothingOwned(t, c, ns)
	name := "alm:" + ns + ":" + ov.Name + ":" + pkg + "-operator"
	if err := c.Get(t.Context(), client.ObjectKey{Name: name}, &rbacv1.ClusterRole{}); err == nil {
		t.Errorf("ClusterRole %s exists: the escalation was granted", name)
	}
}

// A tenant ServiceAccount that holds the namespaced permissions of a bundle installs it and upgrades it; once it
// loses one, the next upgrade is refused and the running version keeps running; granted again, the upgrade proceeds.
func TestTenantInstallsAndUpgradesWithItsServiceAccount(t *testing.T) {
	c := harness.Client(t, cp)
	harness.RunKubelet(t, c, nil)
	startALM(t, "all", trustedOnly)
	ns := harness.Namespace(t, c, "tenant")
	role := tenantServiceAccount(t, c, ns, "installer", tenantRules)
	catalogSource(t, c, ns, "ops")
	bundles, pkg := t.TempDir(), "tenantop"
	demo := func(version, replaces string) harness.Demo {
		d := harness.Demo{Package: pkg, Name: pkg + ".v" + version, Version: version, Namespaced: true}
		if replaces != "" {
			d.Replaces = pkg + ".v" + replaces
		}
		return d
	}
	harness.Publish(t, c, harness.WriteBundle(t, bundles, demo("1.0.0", "")), "ops", ns)
	appType(t, c, ns, pkg, asServiceAccount("installer"))
	waitAppType(t, c, ns, pkg, 60*time.Second, installed("1.0.0"))
	harness.Publish(t, c, harness.WriteBundle(t, bundles, demo("1.1.0", "1.0.0")), "ops", ns)
	waitAppType(t, c, ns, pkg, 60*time.Second, installed("1.1.0"))

	// The admin takes services away from the ServiceAccount: 1.2.0, which applies a Service, is refused.
	role.Rules = append([]rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets", "serviceaccounts"},
		Verbs: tenantRules[0].Verbs}}, tenantRules[1:]...)
	if err := c.Update(t.Context(), role); err != nil {
		t.Fatal(err)
	}
	harness.Publish(t, c, harness.WriteBundle(t, bundles, demo("1.2.0", "1.1.0")), "ops", ns)
	ov := refused(t, c, ns, pkg+".v1.2.0", 60*time.Second)
	msg := apimeta.FindStatusCondition(ov.Status.Conditions, operatorsv1alpha1.ConditionAuthorized).Message
	if want := "kubectl auth can-i create services -n " + ns + " --as system:serviceaccount:" + ns + ":installer"; !strings.Contains(msg, want) {
		t.Errorf("Authorized message lacks %q:\n%s", want, msg)
	}
	running := harness.WaitPhase(t, c, ns, pkg+".v1.1.0", operatorsv1alpha1.PhaseSucceeded, 10*time.Second)
	harness.WaitDeploymentImage(t, c, ns, pkg+"-operator", "alm.local/"+pkg+":1.1.0", 10*time.Second)
	cm := &corev1.ConfigMap{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: pkg + "-config"}, cm); err != nil || cm.Data["version"] != "1.1.0" {
		t.Errorf("ConfigMap %s-config: %v %v, want 1.1.0's, untouched by the refused upgrade", pkg, cm.Data, err)
	}
	if len(running.Status.Owned) == 0 {
		t.Errorf("running version %s owns nothing", running.Name)
	}

	// Granted again: the refused upgrade is retried and goes through.
	role.Rules = tenantRules
	if err := c.Update(t.Context(), role); err != nil {
		t.Fatal(err)
	}
	waitAppType(t, c, ns, pkg, 90*time.Second, installed("1.2.0"))
}

// Without spec.serviceAccountName, ALM installs with its own permissions only where a cluster admin trusts it:
// elsewhere the install is refused with how to proceed; once the namespace is labelled, it installs.
func TestNoServiceAccountInstallsOnlyInTrustedNamespaces(t *testing.T) {
	c := harness.Client(t, cp)
	harness.RunKubelet(t, c, nil)
	startALM(t, "all", trustedOnly)
	ns := harness.Namespace(t, c, "untrusted")
	catalogSource(t, c, ns, "ops")
	pkg := "plain"
	harness.Publish(t, c, harness.WriteBundle(t, t.TempDir(), harness.Demo{Package: pkg, Name: pkg + ".v1.0.0", Version: "1.0.0"}), "ops", ns)
	appType(t, c, ns, pkg)
	ov := refused(t, c, ns, pkg+".v1.0.0", 60*time.Second)
	msg := apimeta.FindStatusCondition(ov.Status.Conditions, operatorsv1alpha1.ConditionAuthorized).Message
	for _, want := range []string{"spec.serviceAccountName", "kubectl label namespace " + ns + " " + operatorsv1alpha1.LabelTrustedInstalls + "=true"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Authorized message lacks %q:\n%s", want, msg)
		}
	}
	assertNothingOwned(t, c, ns)

	namespace := &corev1.Namespace{}
	if err := c.Get(t.Context(), client.ObjectKey{Name: ns}, namespace); err != nil {
		t.Fatal(err)
	}
	namespace.Labels[operatorsv1alpha1.LabelTrustedInstalls] = "true"
	if err := c.Update(t.Context(), namespace); err != nil {
		t.Fatal(err)
	}
	waitAppType(t, c, ns, pkg, 90*time.Second, installed("1.0.0"))
}
