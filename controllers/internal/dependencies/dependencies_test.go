package dependencies

import (
	"strings"
	"testing"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

func ov(pkg, v string, phase operatorsv1alpha1.OperatorVersionPhase, deps ...string) operatorsv1alpha1.OperatorVersion {
	o := operatorsv1alpha1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Name: pkg + ".v" + v},
		Spec:   operatorsv1alpha1.OperatorVersionSpec{PackageName: pkg, Version: version.OperatorVersion{Version: semver.MustParse(v)}},
		Status: operatorsv1alpha1.OperatorVersionStatus{Phase: phase}}
	for _, d := range deps {
		name, rng, _ := strings.Cut(d, " ")
		o.Spec.RequiredPackages = append(o.Spec.RequiredPackages, operatorsv1alpha1.RequiredPackage{Name: name, VersionRange: rng})
	}
	return o
}

func TestDependencyState(t *testing.T) {
	dep := operatorsv1alpha1.RequiredPackage{Name: "db", VersionRange: ">=1.0.0 <2.0.0"}
	for _, tc := range []struct {
		name     string
		versions []operatorsv1alpha1.OperatorVersion
		appTypes []operatorsv1alpha1.AppType
		want     string // "" met
	}{
		{"in range, Succeeded", []operatorsv1alpha1.OperatorVersion{ov("db", "1.5.0", operatorsv1alpha1.PhaseSucceeded)}, nil, ""},
		{"in range, Installing", []operatorsv1alpha1.OperatorVersion{ov("db", "1.5.0", operatorsv1alpha1.PhaseInstalling)}, nil, "db >=1.0.0 <2.0.0: 1.5.0 Installing"},
		{"Succeeded outside the range", []operatorsv1alpha1.OperatorVersion{ov("db", "2.0.0", operatorsv1alpha1.PhaseSucceeded)}, nil, "2.0.0 Succeeded, outside the range"},
		{"declared, nothing yet", nil, []operatorsv1alpha1.AppType{{ObjectMeta: metav1.ObjectMeta{Name: "db"}, Spec: operatorsv1alpha1.AppTypeSpec{Package: "db"}}}, "AppType db declares it"},
		{"nothing", nil, nil, "not declared yet"},
	} {
		got := dependencyState(dep, tc.versions, tc.appTypes)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestCycle(t *testing.T) {
	x := ov("x", "1.0.0", operatorsv1alpha1.PhasePending, "y")
	for _, tc := range []struct {
		name   string
		others []operatorsv1alpha1.OperatorVersion
		want   string
	}{
		{"two", []operatorsv1alpha1.OperatorVersion{ov("y", "1.0.0", operatorsv1alpha1.PhasePending, "x >=1.0.0")}, "x -> y -> x"},
		{"three", []operatorsv1alpha1.OperatorVersion{ov("y", "1.0.0", "", "z"), ov("z", "1.0.0", "", "x")}, "x -> y -> z -> x"},
		{"a Succeeded version breaks it", []operatorsv1alpha1.OperatorVersion{ov("y", "1.0.0", operatorsv1alpha1.PhaseSucceeded, "x")}, ""},
		{"no way back", []operatorsv1alpha1.OperatorVersion{ov("y", "1.0.0", "", "z"), ov("z", "1.0.0", "", "y")}, ""},
	} {
		if got := Cycle(&x, append(tc.others, x)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
