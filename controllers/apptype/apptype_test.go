package apptype

import (
	"testing"

	"github.com/blang/semver/v4"
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
