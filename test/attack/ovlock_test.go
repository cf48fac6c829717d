package attack

// Issue 34, items 4 and 8: OperatorVersions are ALM's to write, and people get roles for ALM's kinds.
//
// Guards: the ValidatingAdmissionPolicy alm-operatorversions (config/admission), the rules on the OperatorVersion
// spec (spec.bundle can be neither removed nor changed), and the aggregated ClusterRoles alm-view and alm-edit
// (config/rbac).

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/policy"
	"github.com/almproject/alm/test/harness"
)

var readWrite = []string{"get", "list", "watch", "create", "update", "patch", "delete"}

// ovEditorRules are what a careless admin grants a team: ALM's kinds in full, OperatorVersions included, and the
// ConfigMaps a ConfigMap catalog is published in.
var ovEditorRules = []rbacv1.PolicyRule{
	{APIGroups: []string{operatorsv1alpha1.GroupVersion.Group}, Resources: []string{"apptypes", "catalogsources", "operatorversions"}, Verbs: readWrite},
	{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: readWrite},
}

// waitPolicyEnforced waits until the API server enforces config/admission's policy: a dry-run create of an
// OperatorVersion by the cluster admin (who is not ALM) is refused. A new policy and binding take a moment to be
// picked up.
func waitPolicyEnforced(t *testing.T) {
	t.Helper()
	admin := harness.Client(t, cp)
	probe := ovByHand(t, almNamespace, "admission-probe", "probe", nil)
	harness.Eventually(t, 30*time.Second, func() error {
		err := admin.Create(t.Context(), probe.DeepCopy(), client.DryRunAll)
		switch {
		case err == nil:
			return fmt.Errorf("a dry-run create of OperatorVersion %s/%s by the cluster admin was allowed; want it refused by ValidatingAdmissionPolicy alm-operatorversions", almNamespace, probe.Name)
		case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "alm-operatorversions"):
			return nil
		}
		return fmt.Errorf("a dry-run create of OperatorVersion %s/%s by the cluster admin: %w; want it refused by ValidatingAdmissionPolicy alm-operatorversions", almNamespace, probe.Name, err)
	})
}

// ovByHand is an OperatorVersion as an attacker writes it: content of its choice, recorded with a digest it computed
// itself, granting clusterRules to its operator.
func ovByHand(t *testing.T, ns, name, pkg string, clusterRules []rbacv1.PolicyRule) *operatorsv1alpha1.OperatorVersion {
	t.Helper()
	ov := harness.Demo{Namespace: ns, Name: name, Version: "9.9.9", Package: pkg, Namespaced: true, ClusterRules: clusterRules}.OperatorVersion()
	return harness.WithContentDigest(t, ov)
}

// readSecrets is the cluster rule of the attack: the operator's token reads every Secret.
var readSecrets = []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list"}}}

// attempt is one write an attacker tries on an OperatorVersion.
type attempt struct {
	name  string
	patch map[string]any // a JSON merge patch of the OperatorVersion
	// want are substrings of the refusal.
	want []string
}

// attempts are the writes of the attack on installed version ov, and one more per field ALM owns.
func attempts(ov *operatorsv1alpha1.OperatorVersion) []attempt {
	install := ov.Spec.Install.DeepCopy()
	install.StrategySpec.ClusterPermissions = append(install.StrategySpec.ClusterPermissions,
		opv1alpha1.StrategyDeploymentPermissions{ServiceAccountName: install.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec.ServiceAccountName, Rules: readSecrets})
	return []attempt{
		{name: "remove spec.bundle", patch: map[string]any{"spec": map[string]any{"bundle": nil}},
			want: []string{"spec.bundle", "bundle is immutable"}},
		{name: "add a cluster rule to spec.install", patch: map[string]any{"spec": map[string]any{"install": install}},
			want: []string{"may not change the spec of OperatorVersion " + ov.Namespace + "/" + ov.Name, "alm-system/alm-manager"}},
		{name: "remove spec.bundle and add a cluster rule", patch: map[string]any{"spec": map[string]any{"bundle": nil, "install": install}},
			want: []string{"bundle is immutable"}},
		{name: "opt in to RBAC escalation", patch: map[string]any{"metadata": map[string]any{"annotations": map[string]any{policy.AnnotationAllowPrefix + "rbac-escalation": "true"}}},
			want: []string{"may not change the annotations " + policy.AnnotationAllowPrefix + "rbac-escalation of OperatorVersion " + ov.Namespace + "/" + ov.Name}},
		{name: "remove the app-type label", patch: map[string]any{"metadata": map[string]any{"labels": map[string]any{operatorsv1alpha1.LabelAppType: nil}}},
			want: []string{"may not change the labels " + operatorsv1alpha1.LabelAppType}},
	}
}

// mergePatch applies patch to ov as c.
func mergePatch(t *testing.T, c client.Client, ov *operatorsv1alpha1.OperatorVersion, patch map[string]any) error {
	t.Helper()
	data, err := json.Marshal(patch)
	if err != nil {
		t.Fatal(err)
	}
	return c.Patch(t.Context(), ov.DeepCopy(), client.RawPatch(types.MergePatchType, data))
}

// The third attack: in a namespace a cluster admin trusts for installs with ALM's own permissions, a tenant
// whose ServiceAccount holds create, update and patch on operatorversions removes spec.bundle, adds a cluster rule
// to spec.install, opts in to what ALM refuses, or writes an OperatorVersion of its own. Every write is refused by
// the API server, naming what and why; the installed version is unchanged and ALM still installs, upgrades and
// collects versions through the tenant's AppType.
func TestTenantCannotWriteOperatorVersions(t *testing.T) {
	startALM(t)
	waitPolicyEnforced(t)
	admin := harness.Client(t, cp)
	ns, as := tenant(t, "ovlock", ovEditorRules, nil)
	trust(t, admin, ns)
	pkg := "locked"
	bundles := t.TempDir()
	demo := func(version, replaces string) harness.Demo {
		d := harness.Demo{Package: pkg, Name: pkg + ".v" + version, Version: version, Namespaced: true}
		if replaces != "" {
			d.Replaces = pkg + ".v" + replaces
		}
		return d
	}
	cs := &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ops"},
		Spec: operatorsv1alpha1.CatalogSourceSpec{ConfigMap: &operatorsv1alpha1.ConfigMapSource{}}}
	if err := as.Create(t.Context(), cs); err != nil {
		t.Fatal(err)
	}
	harness.Publish(t, as, harness.WriteBundle(t, bundles, demo("1.0.0", "")), "ops", ns)
	at := &operatorsv1alpha1.AppType{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pkg}, Spec: operatorsv1alpha1.AppTypeSpec{Package: pkg}}
	if err := as.Create(t.Context(), at); err != nil {
		t.Fatal(err)
	}
	v1 := harness.WaitPhase(t, as, ns, pkg+".v1.0.0", operatorsv1alpha1.PhaseSucceeded, 60*time.Second)
	if v1.Spec.Bundle == nil {
		t.Fatalf("ALM created %s without spec.bundle", v1.Name)
	}

	for _, a := range attempts(v1) {
		err := mergePatch(t, as, v1, a.patch)
		if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) {
			t.Errorf("%s: %v; want it refused", a.name, err)
			continue
		}
		for _, w := range a.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: refusal %q does not say %q", a.name, err, w)
			}
		}
		t.Logf("%s: %v", a.name, err)
	}
	byHand := ovByHand(t, ns, "byhand.v9.9.9", pkg, readSecrets)
	err := as.Create(t.Context(), byHand)
	for _, w := range []string{"system:serviceaccount:" + ns + ":tenant may not create OperatorVersion " + ns + "/byhand.v9.9.9",
		"Declare an AppType for package \"" + pkg + "\""} {
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), w) {
			t.Errorf("creating an OperatorVersion by hand: %v; want it refused saying %q", err, w)
		}
	}
	// What is not ALM's stays the tenant's: its own label on the version.
	if err := mergePatch(t, as, v1, map[string]any{"metadata": map[string]any{"labels": map[string]any{"team": "a"}}}); err != nil {
		t.Errorf("labelling the version team=a: %v; want it allowed, the label is not ALM's", err)
	}

	stored := &operatorsv1alpha1.OperatorVersion{}
	if err := admin.Get(t.Context(), client.ObjectKeyFromObject(v1), stored); err != nil {
		t.Fatal(err)
	}
	if stored.Spec.Bundle == nil || *stored.Spec.Bundle != *v1.Spec.Bundle || len(stored.Spec.Install.StrategySpec.ClusterPermissions) != 0 ||
		stored.Annotations[policy.AnnotationAllowPrefix+"rbac-escalation"] != "" || stored.Labels[operatorsv1alpha1.LabelAppType] == "" {
		t.Errorf("the installed version changed: bundle %v, clusterPermissions %v, annotations %v, labels %v",
			stored.Spec.Bundle, stored.Spec.Install.StrategySpec.ClusterPermissions, stored.Annotations, stored.Labels)
	}
	if err := admin.Get(t.Context(), client.ObjectKeyFromObject(byHand), &operatorsv1alpha1.OperatorVersion{}); !apierrors.IsNotFound(err) {
		t.Errorf("OperatorVersion %s: %v; want it not to exist", byHand.Name, err)
	}

	// ALM itself still upgrades through the AppType and collects the old version.
	harness.Publish(t, as, harness.WriteBundle(t, bundles, demo("1.1.0", "1.0.0")), "ops", ns)
	harness.WaitPhase(t, as, ns, pkg+".v1.1.0", operatorsv1alpha1.PhaseSucceeded, 60*time.Second)
	harness.WaitGone(t, as, v1, 60*time.Second)
}

// trust labels ns for installs with ALM's own permissions, as a cluster admin does (the attack happened
// in such a namespace).
func trust(t *testing.T, admin client.Client, ns string) {
	t.Helper()
	patch := []byte(`{"metadata":{"labels":{"` + operatorsv1alpha1.LabelTrustedInstalls + `":"true"}}}`)
	if err := admin.Patch(t.Context(), &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: ns}}, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

// A person bound to the built-in edit ClusterRole in a namespace manages AppTypes and CatalogSources there, through
// the aggregated ClusterRole alm-edit, and reads OperatorVersions through alm-view; RBAC refuses every write of an
// OperatorVersion, before any admission policy is asked. The built-in view role reads them too, and writes nothing.
func TestNamespaceEditorsDeclareAndOnlyReadOperatorVersions(t *testing.T) {
	startALM(t)
	admin := harness.Client(t, cp)
	ns, editor := tenant(t, "editor", nil, nil)
	bind(t, admin, ns, "tenant", "edit")
	waitAllowed(t, editor, ns, "create", "apptypes")
	waitAllowed(t, editor, ns, "list", "operatorversions")

	pkg := "declared"
	cs := &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ops"},
		Spec: operatorsv1alpha1.CatalogSourceSpec{ConfigMap: &operatorsv1alpha1.ConfigMapSource{}}}
	if err := editor.Create(t.Context(), cs); err != nil {
		t.Fatalf("an editor creating CatalogSource %s/ops: %v", ns, err)
	}
	// The built-in edit role writes ConfigMaps: the editor publishes to its ConfigMap catalog.
	harness.Publish(t, editor, harness.WriteBundle(t, t.TempDir(), harness.Demo{Package: pkg, Name: pkg + ".v1.0.0", Version: "1.0.0", Namespaced: true}), "ops", ns)
	at := &operatorsv1alpha1.AppType{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pkg}, Spec: operatorsv1alpha1.AppTypeSpec{Package: pkg}}
	if err := editor.Create(t.Context(), at); err != nil {
		t.Fatalf("an editor creating AppType %s/%s: %v", ns, pkg, err)
	}
	// ALM creates the version (its install is refused: the namespace is not trusted and the AppType names no
	// ServiceAccount), and the editor reads it.
	ov := &operatorsv1alpha1.OperatorVersion{}
	harness.Eventually(t, 60*time.Second, func() error {
		if err := editor.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: pkg + ".v1.0.0"}, ov); err != nil {
			return err
		}
		if c := apimeta.FindStatusCondition(ov.Status.Conditions, operatorsv1alpha1.ConditionAuthorized); c == nil {
			return fmt.Errorf("OperatorVersion %s has no Authorized condition yet", ov.Name)
		}
		return nil
	})
	if err := editor.List(t.Context(), &operatorsv1alpha1.OperatorVersionList{}, client.InNamespace(ns)); err != nil {
		t.Errorf("an editor listing OperatorVersions: %v", err)
	}

	refusedByRBAC := func(what string, err error) {
		t.Helper()
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "cannot") || strings.Contains(err.Error(), "ValidatingAdmissionPolicy") {
			t.Errorf("an editor trying to %s: %v; want RBAC to refuse it", what, err)
		}
	}
	for _, a := range attempts(ov) {
		refusedByRBAC(a.name, mergePatch(t, editor, ov, a.patch))
	}
	refusedByRBAC("create an OperatorVersion", editor.Create(t.Context(), ovByHand(t, ns, "byhand.v9.9.9", pkg, readSecrets)))
	refusedByRBAC("delete an OperatorVersion", editor.Delete(t.Context(), ov.DeepCopy()))
	status := ov.DeepCopy()
	status.Status.Phase = operatorsv1alpha1.PhaseSucceeded
	refusedByRBAC("write an OperatorVersion's status", editor.Status().Update(t.Context(), status))

	// view reads ALM's kinds and writes none of them.
	viewNS, viewer := tenant(t, "viewer", nil, nil)
	bind(t, admin, viewNS, "tenant", "view")
	for _, r := range []string{"apptypes", "catalogsources", "operatorversions"} {
		waitAllowed(t, viewer, viewNS, "list", r)
		for _, verb := range []string{"create", "patch", "delete"} {
			if allowed(t, viewer, viewNS, verb, r) {
				t.Errorf("the built-in view role may %s %s", verb, r)
			}
		}
	}
	for _, verb := range []string{"create", "patch", "delete"} {
		if allowed(t, editor, ns, verb, "operatorversions") {
			t.Errorf("the built-in edit role may %s operatorversions", verb)
		}
	}
}

// bind binds ServiceAccount ns/name to ClusterRole role in ns, as a cluster admin gives a person a namespace.
func bind(t *testing.T, admin client.Client, ns, name, role string) {
	t.Helper()
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-" + role},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}}}
	if err := admin.Create(t.Context(), rb); err != nil {
		t.Fatal(err)
	}
}

// allowed asks the API server whether c may verb resource (of ALM's group) in ns (a SelfSubjectAccessReview).
func allowed(t *testing.T, c client.Client, ns, verb, resource string) bool {
	t.Helper()
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: operatorsv1alpha1.GroupVersion.Group, Resource: resource}}}
	if err := c.Create(t.Context(), review); err != nil {
		t.Fatal(err)
	}
	return review.Status.Allowed
}

// waitAllowed waits until c may verb resource in ns: the clusterrole-aggregation controller has copied alm-view's
// and alm-edit's rules into the built-in roles.
func waitAllowed(t *testing.T, c client.Client, ns, verb, resource string) {
	t.Helper()
	harness.Eventually(t, 30*time.Second, func() error {
		if !allowed(t, c, ns, verb, resource) {
			return fmt.Errorf("may not %s %s.%s in %s yet: the aggregated roles of config/rbac are not in the built-in roles",
				verb, resource, operatorsv1alpha1.GroupVersion.Group, ns)
		}
		return nil
	})
}

// The policy compares whole specs: a cluster admin's (or the garbage collector's) metadata write on a large version
// that ALM wrote must not be refused by the CEL cost budget. 300 objects of 3 KiB each, about as large as an
// OperatorVersion can be stored.
func TestPolicyAllowsMetadataWritesOnLargeVersions(t *testing.T) {
	applyConfig(t)
	waitPolicyEnforced(t)
	admin := harness.Client(t, cp)
	alm := clientAs(t, almNamespace, almServiceAccount)
	ns := harness.Namespace(t, admin, "large")
	d := harness.Demo{Namespace: ns, Name: "large.v1.0.0", Version: "1.0.0", Package: "large", Namespaced: true}
	for i := range 300 {
		d.ExtraObjects = append(d.ExtraObjects, map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": fmt.Sprintf("large-%d", i)}, "data": map[string]any{"k": strings.Repeat("x", 3<<10)}})
	}
	ov := d.OperatorVersion()
	if err := alm.Create(t.Context(), ov); err != nil {
		t.Fatalf("ALM creating a large OperatorVersion: %v", err)
	}
	if err := mergePatch(t, admin, ov, map[string]any{"metadata": map[string]any{"labels": map[string]any{"team": "a"}}}); err != nil {
		t.Errorf("a cluster admin labelling a large OperatorVersion: %v; want it allowed", err)
	}
	if err := mergePatch(t, admin, ov, map[string]any{"spec": map[string]any{"displayName": "changed"}}); !apierrors.IsForbidden(err) ||
		!strings.Contains(err.Error(), "may not change the spec of OperatorVersion "+ns+"/large.v1.0.0") {
		t.Errorf("a cluster admin changing the spec of a large OperatorVersion: %v; want it refused by the policy's rule", err)
	}
}
