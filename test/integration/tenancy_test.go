package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/loops"
	"github.com/almproject/alm/test/harness"
)

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
	startALM(t, "all")
	ns := harness.TenantNamespace(t, c, "tenant")
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
	startALM(t, "all")
	ns := harness.TenantNamespace(t, c, "tenant")
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
	startALM(t, "all")
	ns := harness.TenantNamespace(t, c, "untrusted")
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
	namespace.Labels[operatorsv1alpha1.LabelTrustedInstalls] = "true" // what the refusal told the admin to do
	if err := c.Update(t.Context(), namespace); err != nil {
		t.Fatal(err)
	}
	waitAppType(t, c, ns, pkg, 90*time.Second, installed("1.0.0"))
}

// A required CRD is cluster-wide: the requirements loop takes it only from the catalogs the version's namespace
// resolves from (never another tenant's, whose CRD could, say, convert through that tenant's webhook), and creates
// it only if the version's ServiceAccount may create CRDs.
func TestTenantRequiredCRDs(t *testing.T) {
	c := harness.Client(t, cp)
	harness.RunKubelet(t, c, nil)
	startALM(t, "all")
	bundles := t.TempDir()
	// tenant's ServiceAccount may create CRDs (a cluster admin granted it); other's may not.
	tenant, other, squatter := harness.TenantNamespace(t, c, "tenant-req"), harness.TenantNamespace(t, c, "other-req"), harness.TenantNamespace(t, c, "squatter")
	for _, ns := range []string{tenant, other} {
		tenantServiceAccount(t, c, ns, "installer", tenantRules)
		catalogSource(t, c, ns, "ops")
	}
	grantCRDs(t, c, tenant, "installer")
	wanted, refusedCRD := "widgets."+tenant+".example.com", "widgets."+other+".example.com"
	catalogSource(t, c, squatter, "evil")
	harness.Publish(t, c, harness.WriteBundle(t, bundles, harness.Demo{Package: "squat", Name: "squat.v1.0.0", Version: "1.0.0", CRDGroup: tenant + ".example.com"}), "evil", squatter)
	for ns, crd := range map[string]string{tenant: wanted, other: refusedCRD} {
		harness.Publish(t, c, harness.WriteBundle(t, bundles, harness.Demo{Package: "app", Name: "app.v1.0.0", Version: "1.0.0", Namespaced: true,
			RequiredCRDs: []string{crd}}), "ops", ns)
		appType(t, c, ns, "app", asServiceAccount("installer"))
	}

	// Only another tenant's catalog offers the kind tenant's version requires: it is not taken from there.
	waitEvent(t, c, tenant, "app.v1.0.0", "RequiredCRDNotInCatalog", wanted, 60*time.Second)
	assertNoCRD(t, c, wanted, "from another tenant's catalog")

	// other's own catalog offers the kind its version requires, but its ServiceAccount may not create CRDs.
	harness.Publish(t, c, harness.WriteBundle(t, bundles, harness.Demo{Package: "provider", Name: "provider.v1.0.0", Version: "1.0.0", CRDGroup: other + ".example.com"}), "ops", other)
	user := "system:serviceaccount:" + other + ":installer"
	waitEvent(t, c, other, "app.v1.0.0", operatorsv1alpha1.ReasonInstallRefused, "kubectl auth can-i create customresourcedefinitions.apiextensions.k8s.io --as "+user, 60*time.Second)
	assertNoCRD(t, c, refusedCRD, "for a ServiceAccount that may not create CRDs")

	// tenant's own catalog offers it: created from there, never from the squatter's.
	harness.Publish(t, c, harness.WriteBundle(t, bundles, harness.Demo{Package: "provider", Name: "provider.v1.0.0", Version: "1.0.0", CRDGroup: tenant + ".example.com"}), "ops", tenant)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	harness.Eventually(t, 90*time.Second, func() error { return c.Get(t.Context(), client.ObjectKey{Name: wanted}, crd) })
	t.Cleanup(func() { _ = c.Delete(context.Background(), crd) })
	if got := crd.Labels[operatorsv1alpha1.LabelAppType]; got != "provider" {
		t.Errorf("CRD %s was created for package %q, want provider (from the tenant's own catalog)", wanted, got)
	}
	assertNoCRD(t, c, refusedCRD, "for a ServiceAccount that may not create CRDs")
}

// grantCRDs lets ServiceAccount ns/name create and update CRDs, as a cluster admin would.
func grantCRDs(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	grant := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-crds"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{"apiextensions.k8s.io"},
		Resources: []string{"customresourcedefinitions"}, Verbs: []string{"create", "update"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-crds"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: grant.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}}}
	for _, obj := range []client.Object{grant, binding} {
		if err := c.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), obj) })
	}
}

// waitEvent waits until an Event about object ns/name has reason and a note containing text.
func waitEvent(t *testing.T, c client.Client, ns, name, reason, text string, timeout time.Duration) {
	t.Helper()
	harness.Eventually(t, timeout, func() error {
		list := &eventsv1.EventList{}
		if err := c.List(t.Context(), list, client.InNamespace(ns)); err != nil {
			return err
		}
		var seen []string
		for _, e := range list.Items {
			if e.Regarding.Name == name && e.Reason == reason && strings.Contains(e.Note, text) {
				t.Logf("Event %s on %s: %s", reason, name, e.Note)
				return nil
			}
			if e.Regarding.Name == name {
				seen = append(seen, e.Reason+": "+e.Note)
			}
		}
		return fmt.Errorf("no Event %s mentioning %q on %s/%s; seen %q", reason, text, ns, name, seen)
	})
}

func assertNoCRD(t *testing.T, c client.Client, name, why string) {
	t.Helper()
	if err := c.Get(t.Context(), client.ObjectKey{Name: name}, &apiextensionsv1.CustomResourceDefinition{}); err == nil {
		t.Fatalf("CRD %s was created %s", name, why)
	}
}

// A registry on loopback is ALM's own host: a tenant's image CatalogSource may not point there (ALM would fetch from
// its own endpoints for the tenant). It is refused without a request, and pulled once a cluster admin trusts the
// namespace.
//
// The catalog is in a repository named after the tenant's namespace, and only its manifest requests are counted: the
// registry's port may be one an earlier test's registry had, and the image CatalogSources that earlier tests left
// (those of trusted namespaces may use loopback) poll it then, for repositories of their own.
func TestTenantImageCatalogOnLoopback(t *testing.T) {
	tenantImageCatalogOnLoopback(t, "all")
}

// TestTenantImageCatalogOnLoopbackWithoutBundleClients: the same with the catalogsource loop alone and no bundle
// clients (loops.Options.Bundles nil), where the loop makes image clients of its own: they hold tenants off
// loopback too.
func TestTenantImageCatalogOnLoopbackWithoutBundleClients(t *testing.T) {
	tenantImageCatalogOnLoopback(t, "catalogsource", func(o *loops.Options) { o.Bundles = nil })
}

func tenantImageCatalogOnLoopback(t *testing.T, loopSpec string, mutate ...func(*loops.Options)) {
	c := harness.Client(t, cp)
	startALM(t, loopSpec, mutate...)
	ns := harness.TenantNamespace(t, c, "tenant-img")
	r := harness.NewRegistry(t)
	dir := t.TempDir()
	harness.WriteBundle(t, dir, harness.Demo{Package: "imgop", Name: "imgop.v1.0.0", Version: "1.0.0"})
	repo := ns + "/ops"
	r.PushCatalog(t, map[string][]byte{"imgop/catalog.json": r.ImageCatalog(t, dir)}, repo+":latest")
	before, served := r.ManifestRequests(repo), r.ServedCount()
	imageCatalog(t, c, r, ns, "ops", repo+":latest")
	cs := waitCatalogReady(t, c, ns, "ops", metav1.ConditionFalse, operatorsv1alpha1.ReasonImageRefused)
	if msg := apimeta.FindStatusCondition(cs.Status.Conditions, operatorsv1alpha1.ConditionReady).Message; !strings.Contains(msg, "on loopback") ||
		!strings.Contains(msg, operatorsv1alpha1.LabelTrustedInstalls+"=true") {
		t.Errorf("Ready message %q does not say the loopback registry is refused and how to trust the namespace", msg)
	}
	if after := r.ManifestRequests(repo); after != before {
		t.Errorf("the loopback registry served %d manifest requests of %s to a tenant's CatalogSource, want none; image CatalogSources "+
			"on %s: %s; requests since it was created:\n%s", after-before, repo, r.Host, sourcesOn(t, c, r.Host), r.Served(served))
	}

	namespace := &corev1.Namespace{}
	if err := c.Get(t.Context(), client.ObjectKey{Name: ns}, namespace); err != nil {
		t.Fatal(err)
	}
	namespace.Labels[operatorsv1alpha1.LabelTrustedInstalls] = "true"
	if err := c.Update(t.Context(), namespace); err != nil {
		t.Fatal(err)
	}
	waitCatalogReady(t, c, ns, "ops", metav1.ConditionTrue, "")
}

// sourcesOn names the image CatalogSources whose spec.image.ref is on host (host:port).
func sourcesOn(t *testing.T, c client.Client, host string) []string {
	t.Helper()
	list := &operatorsv1alpha1.CatalogSourceList{}
	if err := c.List(t.Context(), list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, cs := range list.Items {
		if cs.Spec.Image != nil && strings.HasPrefix(cs.Spec.Image.Ref, host+"/") {
			names = append(names, cs.Namespace+"/"+cs.Name+" "+cs.Spec.Image.Ref)
		}
	}
	return names
}

// waitCatalogReady waits until CatalogSource ns/name has Ready status (and reason, when given), and returns it.
func waitCatalogReady(t *testing.T, c client.Client, ns, name string, status metav1.ConditionStatus, reason string) *operatorsv1alpha1.CatalogSource {
	t.Helper()
	cs := &operatorsv1alpha1.CatalogSource{}
	harness.Eventually(t, 60*time.Second, func() error {
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, cs); err != nil {
			return err
		}
		ready := apimeta.FindStatusCondition(cs.Status.Conditions, operatorsv1alpha1.ConditionReady)
		if ready == nil || ready.Status != status || reason != "" && ready.Reason != reason {
			return fmt.Errorf("CatalogSource %s/%s Ready %+v, want %s %s", ns, name, ready, status, reason)
		}
		return nil
	})
	return cs
}
