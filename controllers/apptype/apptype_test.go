package apptype

import (
	"testing"

	"github.com/blang/semver/v4"

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
