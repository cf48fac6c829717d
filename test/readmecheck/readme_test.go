package readmecheck

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEFiguresAreGenerated: every number the README states in a measured-figures context is in
// docs/measured.md, and every row the README links to is there.
func TestREADMEFiguresAreGenerated(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	measured, err := os.ReadFile("../../" + MeasuredFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range Unbacked(string(readme), string(measured)) {
		t.Error(p)
	}
}

// TestUnbacked: the check bites on a figure typed by hand, on one in a table under "## Measured", and on a link to a
// row that is not there; it leaves code, names and numbers outside measured-figures contexts alone.
func TestUnbacked(t *testing.T) {
	measured := "## `make bench`\n\nMeasured 2026-11-25 at commit abc on X, 2 cores.\n\n" +
		"| Scale: ALM peak RSS (MB) | 96 | target ≤ 100 | met |\n| Konnect: 10,000 creates → all Programmed (s) | 72 |  |  |\n"
	tests := []struct {
		name, readme string
		want         []string
	}{
		{"backed", "ALM's peak RSS is in [Scale: ALM peak RSS (MB)](docs/measured.md): 96 MB at 10,000 entities.\n", nil},
		{"typed by hand", "Measured here: 3/3 converged, slowest run 31 s.\n", []string{"31 is stated", "3 is stated"}},
		{"a row under Measured", "## Measured\n\n| Figure | 176 |\n", []string{"176 is stated"}},
		{"a missing row", "See [Scale: ALM peak RSS (GB)](docs/measured.md).\n", []string{`links to a row "Scale: ALM peak RSS (GB)"`}},
		{"a before/after table", "| Figure | Target | Before | After |\n|---|---|---|---|\n| calls per entity | | 2.03 | 1.02 |\n", []string{"2.03 is stated", "1.02 is stated"}},
		{"not a measured context", "A bundle must fit in one ConfigMap (1048576 bytes); rows 89–101.\n", nil},
		{"code and names", "Measured by `make bench BENCH=Scale -count 7`, go1.26.8, k8s-uid, v1alpha1.\n\n```\n[ 9.9s] measured 17\n```\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Unbacked(tt.readme, measured)
			if len(tt.want) == 0 && len(got) > 0 {
				t.Errorf("want no problems, got %q", got)
			}
			for _, w := range tt.want {
				found := false
				for _, g := range got {
					found = found || strings.Contains(g, w)
				}
				if !found {
					t.Errorf("want a problem with %q, got %q", w, got)
				}
			}
		})
	}
}
