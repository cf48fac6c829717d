package apptype

import (
	"testing"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/deprecation"
	"github.com/almproject/alm/catalog/index"
)

func TestCandidatesPutTheChosenFirst(t *testing.T) {
	res := index.Result{Candidates: []index.Candidate{
		{Name: "p.v3", Version: semver.MustParse("3.0.0"), Catalog: "ns/c", Reason: index.ReasonOutOfRange, Detail: "outside the range <3.0.0"},
		{Name: "p.v2", Version: semver.MustParse("2.0.0"), Catalog: "ns/c", Reason: index.ReasonChosen, Detail: "highest version in range"},
		{Name: "p.v1", Version: semver.MustParse("1.0.0"), Catalog: "ns/c", Reason: index.ReasonLowerVersion},
	}}
	res.Chosen = &res.Candidates[1]
	got := Candidates(res)
	if len(got) != 3 || got[0].Name != "p.v2" || !got[0].Chosen || got[1].Chosen || got[1].Reason != "OutOfRange: outside the range <3.0.0" || got[2].Reason != "LowerVersion" {
		t.Fatalf("Candidates = %+v", got)
	}
}

func TestDeprecatedCondition(t *testing.T) {
	for _, tc := range []struct {
		name    string
		verdict deprecation.Verdict
		status  metav1.ConditionStatus
		reason  string
		message string
	}{
		{"nothing deprecated", nil, metav1.ConditionFalse, operatorsv1alpha1.ReasonNotDeprecated,
			"the catalog deprecates neither the package, its channel nor the installed bundle"},
		{"the package", deprecation.Verdict{{Scope: deprecation.ScopePackage, Message: "use q"}}, metav1.ConditionTrue,
			operatorsv1alpha1.ReasonPackageDeprecated, "package deprecated: use q"},
		{"the channel and the package: the channel's reason, both messages",
			deprecation.Verdict{{Scope: deprecation.ScopeChannel, Name: "alpha", Message: "alpha ends"}, {Scope: deprecation.ScopePackage, Message: "use q"}},
			metav1.ConditionTrue, operatorsv1alpha1.ReasonChannelDeprecated, "channel alpha deprecated: alpha ends; package deprecated: use q"},
		{"the bundle", deprecation.Verdict{{Scope: deprecation.ScopeBundle, Name: "p.v1", Message: "broken"}}, metav1.ConditionTrue,
			operatorsv1alpha1.ReasonBundleDeprecated, "bundle p.v1 deprecated: broken"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, reason, msg := deprecatedCondition(tc.verdict)
			if status != tc.status || reason != tc.reason || msg != tc.message {
				t.Errorf("got %s %s %q, want %s %s %q", status, reason, msg, tc.status, tc.reason, tc.message)
			}
		})
	}
}

func TestPreviewStale(t *testing.T) {
	for _, tc := range []struct {
		name     string
		preview  *operatorsv1alpha1.UpgradePreview
		from, to string
		want     bool
	}{
		{"none yet", nil, "1.0.0", "1.1.0", true},
		{"of the offered version", &operatorsv1alpha1.UpgradePreview{From: "1.0.0", To: "1.1.0"}, "1.0.0", "1.1.0", false},
		{"another version is offered now", &operatorsv1alpha1.UpgradePreview{From: "1.0.0", To: "1.1.0"}, "1.0.0", "1.2.0", true},
		{"another version is installed now", &operatorsv1alpha1.UpgradePreview{From: "1.0.0", To: "1.2.0"}, "1.1.0", "1.2.0", true},
		{"it failed last time", &operatorsv1alpha1.UpgradePreview{From: "1.0.0", To: "1.1.0", Error: "x"}, "1.0.0", "1.1.0", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := previewStale(tc.preview, tc.from, tc.to); got != tc.want {
				t.Errorf("previewStale = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestUpgradeUnderWay(t *testing.T) {
	offered := func(reason string) *operatorsv1alpha1.AppType {
		at := &operatorsv1alpha1.AppType{}
		at.Generation = 2
		at.Status = operatorsv1alpha1.AppTypeStatus{ObservedGeneration: 2, InstalledOperatorVersion: "p.v1.0.0", AvailableUpgrade: "2.0.0",
			Conditions: []metav1.Condition{{Type: operatorsv1alpha1.ConditionUpgradeAvailable, Status: metav1.ConditionTrue, Reason: reason}}}
		return at
	}
	newVersion := func(name, v string, phase operatorsv1alpha1.OperatorVersionPhase) *operatorsv1alpha1.OperatorVersion {
		ov := &operatorsv1alpha1.OperatorVersion{}
		ov.Name, ov.Spec.Version, ov.Status.Phase = name, version.OperatorVersion{Version: semver.MustParse(v)}, phase
		return ov
	}
	specChanged := offered(operatorsv1alpha1.ReasonUpgradePending)
	specChanged.Generation = 3
	for _, tc := range []struct {
		name      string
		at        *operatorsv1alpha1.AppType
		installed *operatorsv1alpha1.OperatorVersion
		want      bool
	}{
		{"the offered upgrade installing: nothing new to report", offered(operatorsv1alpha1.ReasonUpgradePending), newVersion("p.v2.0.0", "2.0.0", operatorsv1alpha1.PhaseInstalling), true},
		{"just created", offered(operatorsv1alpha1.ReasonUpgradePending), newVersion("p.v2.0.0", "2.0.0", ""), true},
		{"Succeeded: report it", offered(operatorsv1alpha1.ReasonUpgradePending), newVersion("p.v2.0.0", "2.0.0", operatorsv1alpha1.PhaseSucceeded), false},
		{"Failed: report it", offered(operatorsv1alpha1.ReasonUpgradePending), newVersion("p.v2.0.0", "2.0.0", operatorsv1alpha1.PhaseFailed), false},
		{"a hop to another version than the offered one", offered(operatorsv1alpha1.ReasonUpgradePending), newVersion("p.v1.5.0", "1.5.0", operatorsv1alpha1.PhaseInstalling), false},
		{"awaiting approval was the last word", offered(operatorsv1alpha1.ReasonAwaitingApproval), newVersion("p.v2.0.0", "2.0.0", operatorsv1alpha1.PhaseInstalling), false},
		{"the spec changed since the status", specChanged, newVersion("p.v2.0.0", "2.0.0", operatorsv1alpha1.PhaseInstalling), false},
		{"the reported version itself", offered(operatorsv1alpha1.ReasonUpgradePending), newVersion("p.v1.0.0", "2.0.0", operatorsv1alpha1.PhaseInstalling), false},
		{"nothing installed", offered(operatorsv1alpha1.ReasonUpgradePending), nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := upgradeUnderWay(tc.at, tc.installed); got != tc.want {
				t.Errorf("upgradeUnderWay = %v, want %v", got, tc.want)
			}
		})
	}
}
