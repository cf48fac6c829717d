package integration

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/requirements"
	"github.com/almproject/alm/test/harness"
)

// A bundle that depends on a package (metadata/dependencies.yaml, olm.package with a range): the requirements loop
// declares an AppType for it with that range, which installs the newest version in range (1.5.0, not 2.0.0); the
// dependent version waits, Pending with a condition naming the dependency and its state, until it has Succeeded.
func TestDependencyInstalledFirst(t *testing.T) {
	c := harness.Client(t, cp)
	ns := harness.Namespace(t, c, "deps")
	db, app := "db", "app"
	var hold atomic.Bool
	hold.Store(true)
	harness.RunKubelet(t, c, func(d *appsv1.Deployment) bool { return hold.Load() && d.Namespace == ns && d.Name == db+"-operator" })
	startALM(t, "all")
	catalogSource(t, c, ns, "ops")
	bundles := t.TempDir()
	for _, d := range []harness.Demo{
		{Package: db, Name: "db.v1.0.0", Version: "1.0.0", Namespaced: true},
		{Package: db, Name: "db.v1.5.0", Version: "1.5.0", Replaces: "db.v1.0.0", Namespaced: true},
		{Package: db, Name: "db.v2.0.0", Version: "2.0.0", Replaces: "db.v1.5.0", Namespaced: true},
		{Package: app, Name: "app.v1.0.0", Version: "1.0.0", Namespaced: true,
			DependsOn: []operatorsv1alpha1.RequiredPackage{{Name: db, VersionRange: ">=1.0.0 <2.0.0"}}},
	} {
		harness.Publish(t, c, harness.WriteBundle(t, bundles, d), "ops", ns)
	}
	appType(t, c, ns, app)

	// db is held Installing: app waits, saying for what.
	waiting := waitOV(t, c, ns, "app.v1.0.0", func(ov *operatorsv1alpha1.OperatorVersion) error {
		cond := apimeta.FindStatusCondition(ov.Status.Conditions, operatorsv1alpha1.ConditionRequirementsMet)
		want := "waiting for dependencies: db >=1.0.0 <2.0.0: 1.5.0 Installing"
		// Pending until the install timeout, then Failed for the same reason and still retried: either holds.
		waiting := ov.Status.Phase == operatorsv1alpha1.PhasePending ||
			ov.Status.Phase == operatorsv1alpha1.PhaseFailed && ov.Status.Reason == operatorsv1alpha1.ReasonRequirementMissing
		if !waiting || cond == nil || !strings.Contains(cond.Message, want) {
			return fmt.Errorf("app.v1.0.0 is %s, RequirementsMet %v; want it waiting, saying %q", ov.Status.Phase, cond, want)
		}
		return nil
	})
	logYAML(t, "kubectl get ov app.v1.0.0 -o yaml (status.conditions) while db installs", waiting.Status.Conditions)
	dbType := &operatorsv1alpha1.AppType{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: db}, dbType); err != nil {
		t.Fatal(err)
	}
	if dbType.Spec.VersionRange != ">=1.0.0 <2.0.0" || dbType.Annotations[requirements.AnnotationCreatedForDependency] != "app.v1.0.0" {
		t.Errorf("AppType db: versionRange %q, annotations %v; want the dependency's range, created for app.v1.0.0", dbType.Spec.VersionRange, dbType.Annotations)
	}
	if len(owned(t, c, ns, "app.v1.0.0")) != 0 {
		t.Error("app.v1.0.0 applied objects before its dependency Succeeded")
	}

	hold.Store(false)
	waitAppType(t, c, ns, db, 60*time.Second, installed("1.5.0"))
	waitAppType(t, c, ns, app, 60*time.Second, installed("1.0.0"))
}

// Dependencies that cannot be met are a condition naming them, never a loop: a cycle fails both versions with
// the chain; a package no catalog serves keeps the version Pending with the AppType's resolution message.
func TestDependencyCycleAndMissingPackage(t *testing.T) {
	c := harness.Client(t, cp)
	harness.RunKubelet(t, c, nil)
	startALM(t, "all")
	ns := harness.Namespace(t, c, "deps-bad")
	catalogSource(t, c, ns, "ops")
	bundles := t.TempDir()
	for _, d := range []harness.Demo{
		{Package: "x", Name: "x.v1.0.0", Version: "1.0.0", Namespaced: true, DependsOn: []operatorsv1alpha1.RequiredPackage{{Name: "y"}}},
		{Package: "y", Name: "y.v1.0.0", Version: "1.0.0", Namespaced: true, DependsOn: []operatorsv1alpha1.RequiredPackage{{Name: "x", VersionRange: ">=1.0.0"}}},
		{Package: "lonely", Name: "lonely.v1.0.0", Version: "1.0.0", Namespaced: true, DependsOn: []operatorsv1alpha1.RequiredPackage{{Name: "nowhere"}}},
	} {
		harness.Publish(t, c, harness.WriteBundle(t, bundles, d), "ops", ns)
	}
	appType(t, c, ns, "x")
	appType(t, c, ns, "lonely")
	for name, chain := range map[string]string{"x.v1.0.0": "x -> y -> x", "y.v1.0.0": "y -> x -> y"} {
		ov := waitOV(t, c, ns, name, func(ov *operatorsv1alpha1.OperatorVersion) error {
			if ov.Status.Phase != operatorsv1alpha1.PhaseFailed || ov.Status.Reason != operatorsv1alpha1.ReasonDependencyCycle || !strings.Contains(ov.Status.Message, chain) {
				return fmt.Errorf("%s is %s %s: %s; want Failed %s naming %s", ov.Name, ov.Status.Phase, ov.Status.Reason, ov.Status.Message, operatorsv1alpha1.ReasonDependencyCycle, chain)
			}
			return nil
		})
		t.Logf("%s: %s", name, ov.Status.Message)
	}
	ov := waitOV(t, c, ns, "lonely.v1.0.0", func(ov *operatorsv1alpha1.OperatorVersion) error {
		want := "nowhere: AppType nowhere cannot install it"
		if ov.Status.Reason != operatorsv1alpha1.ReasonRequirementMissing || !strings.Contains(ov.Status.Message, want) {
			return fmt.Errorf("lonely.v1.0.0 is %s: %s; want it waiting (%s), saying %q", ov.Status.Phase, ov.Status.Message, operatorsv1alpha1.ReasonRequirementMissing, want)
		}
		return nil
	})
	t.Logf("lonely.v1.0.0: %s", ov.Status.Message)
	for _, name := range []string{"x.v1.0.0", "y.v1.0.0", "lonely.v1.0.0"} {
		if len(owned(t, c, ns, name)) != 0 {
			t.Errorf("%s applied objects although its dependencies are not met", name)
		}
	}
}

// owned lists the Deployments labelled for OperatorVersion ns/name.
func owned(t *testing.T, c client.Client, ns, name string) []string {
	t.Helper()
	var out []string
	for _, list := range []client.ObjectList{&appsv1.DeploymentList{}} {
		if err := c.List(t.Context(), list, client.InNamespace(ns), client.MatchingLabels{operatorsv1alpha1.LabelOwner: name}); err != nil {
			t.Fatal(err)
		}
		_ = apimeta.EachListItem(list, func(o runtime.Object) error {
			out = append(out, fmt.Sprintf("%T", o))
			return nil
		})
	}
	return out
}
