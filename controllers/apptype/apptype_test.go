package apptype

import (
	"testing"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog"
)

func ov(name, v, replaces string) operatorsv1alpha1.OperatorVersion {
	return operatorsv1alpha1.OperatorVersion{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: operatorsv1alpha1.OperatorVersionSpec{PackageName: "p", Replaces: replaces,
			Version: version.OperatorVersion{Version: semver.MustParse(v)}},
	}
}

func TestHead(t *testing.T) {
	cases := []struct {
		name string
		all  []operatorsv1alpha1.OperatorVersion
		want string
	}{
		{"nothing installed", nil, ""},
		{"one version", []operatorsv1alpha1.OperatorVersion{ov("p.v1", "1.0.0", "")}, "p.v1"},
		{"upgrade in progress: the replacing version", []operatorsv1alpha1.OperatorVersion{ov("p.v1", "1.0.0", ""), ov("p.v2", "2.0.0", "p.v1")}, "p.v2"},
		{"failed intermediate and its replacement", []operatorsv1alpha1.OperatorVersion{ov("p.v1", "1.0.0", ""), ov("p.v2", "2.0.0", "p.v1"), ov("p.v3", "3.0.0", "p.v2")}, "p.v3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if h := Head(tc.all); h != nil {
				got = h.Name
			}
			if got != tc.want {
				t.Fatalf("Head = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCandidatesPutTheChosenFirst(t *testing.T) {
	res := catalog.Result{Candidates: []catalog.Candidate{
		{Name: "p.v3", Version: semver.MustParse("3.0.0"), Catalog: "ns/c", Reason: catalog.ReasonOutOfRange, Detail: "outside the range <3.0.0"},
		{Name: "p.v2", Version: semver.MustParse("2.0.0"), Catalog: "ns/c", Reason: catalog.ReasonChosen, Detail: "highest version in range"},
		{Name: "p.v1", Version: semver.MustParse("1.0.0"), Catalog: "ns/c", Reason: catalog.ReasonLowerVersion},
	}}
	res.Chosen = &res.Candidates[1]
	got := Candidates(res)
	if len(got) != 3 || got[0].Name != "p.v2" || !got[0].Chosen || got[1].Chosen || got[1].Reason != "OutOfRange: outside the range <3.0.0" || got[2].Reason != "LowerVersion" {
		t.Fatalf("Candidates = %+v", got)
	}
}
