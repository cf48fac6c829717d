package docscheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const root = "../.."

// TestLinksResolve: every relative link and #anchor of README.md, CONTRIBUTING.md and docs/ resolves.
func TestLinksResolve(t *testing.T) {
	problems, err := BrokenLinks(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestFiguresAreMeasured: every measured figure of the documents names its row of docs/measured.md and equals it.
func TestFiguresAreMeasured(t *testing.T) {
	measured, err := readFile(root, MeasuredFile)
	if err != nil {
		t.Fatal(err)
	}
	rows := Rows(measured)
	files, err := Files(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f == MeasuredFile {
			continue
		}
		text, err := readFile(root, f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(text, GeneratedMarker) {
			continue // quotes the code's own comments and help, which state settings, not measurements
		}
		for _, p := range FigureProblems(f, text, rows) {
			t.Error(p)
		}
	}
}

const measuredSample = "# Measured figures\n\n## `make bench`\n\n| Figure | Measured | Anchor or target | |\n|---|---|---|---|\n" +
	"| Scale: ALM peak RSS (MB) | 99 | target ≤ 100 | met |\n" +
	"| Scale 10k: ALM peak RSS (MB; goal ≤ 300) | not run (BenchmarkScale10k rss-MB) | target ≤ 300 | |\n" +
	"| Catalog load + index, 10,000 bundles (ms) | 112 | operator-registry's library, same run: 354 (ALM 0.32×) |  |\n\n" +
	"## `make bench-scale-10k`\n\n| Figure | Measured | Anchor or target | |\n|---|---|---|---|\n" +
	"| Scale: ALM peak RSS (MB) | not run (BenchmarkScale rss-MB) | target ≤ 100 | |\n" +
	"| Scale 10k: ALM peak RSS (MB; goal ≤ 300) | 355 | target ≤ 300 | missed |\n"

// TestFigureProblems: the figure check bites on a figure typed without its row, on a target quoted as a measurement,
// on a value that is not the row's, and on a row that is not there; it leaves bounds, code and names alone.
func TestFigureProblems(t *testing.T) {
	rows := Rows(measuredSample)
	tests := []struct {
		name, text string
		want       []string // substrings of the problems, in order; none: no problem
	}{
		{"the issue's sentence", "10,000 installs in 300 MB.\n", []string{"300 MB looks like a measurement but names no row"}},
		{"a target quoted as the measurement", "10,000 installs in 300 MB ([Scale 10k: ALM peak RSS (MB; goal ≤ 300)](measured.md)).\n",
			[]string{"300 MB is not what row \"Scale 10k: ALM peak RSS (MB; goal ≤ 300)\""}},
		{"the measured value", "10,000 installs in 355 MB ([Scale 10k: ALM peak RSS (MB; goal ≤ 300)](measured.md)), over its goal.\n", nil},
		{"the section named", "1,000 installs in **99 MB** ([Scale: ALM peak RSS (MB)](../measured.md#make-bench)).\n", nil},
		{"the wrong section", "99 MB ([Scale: ALM peak RSS (MB)](measured.md#make-bench-scale-10k))\n",
			[]string{"that section does not have", "that section does not have"}},
		{"an anchor of the same run", "opm took 354 ms ([Catalog load + index, 10,000 bundles (ms)](measured.md)), ALM 0.32× of it.\n",
			[]string{"0.32× looks like a measurement"}},
		{"a row that is not there", "See [Scale: ALM peak RSS (GB)](measured.md).\n", []string{`links to row "Scale: ALM peak RSS (GB)"`}},
		{"bounds, code and names", "A poll every 10 s, at most 64 MB (≤ 2 s); `make bench -count 7` took 3 s in code; go1.26, v1.35, k8s.\n\n```\n[ 9.9s] 17 MB\n```\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FigureProblems("doc.md", tt.text, rows)
			if len(got) != len(tt.want) {
				t.Fatalf("want %d problems %q, got %q", len(tt.want), tt.want, got)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d: want %q in %q", i, w, got[i])
				}
			}
		})
	}
}

// TestBrokenLinks: the link check bites on a missing file, a missing anchor and a link out of the repository, and
// follows GitHub's anchors (repeated headings, code and punctuation in headings, <a id>).
func TestBrokenLinks(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, text string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "# ALM\n\n[ok](docs/a.md#the-alm-loops--upgrades) [ok](docs/a.md#faq-1) [ok](#alm) [dir](docs)\n"+
		"[missing](docs/b.md) [no anchor](docs/a.md#nope) [outside](../x.md) [web](https://example.com/#x)\n"+
		"`[in code](nowhere.md)`\n")
	write("CONTRIBUTING.md", "# Contributing\n\n[ok](docs/a.md#here)\n")
	write("docs/a.md", "# The `alm` loops — upgrades\n\n## FAQ\n\n## FAQ\n\n<a id=\"here\"></a>\n\n[up](../README.md#alm) [bad](../README.md#alm-1)\n")
	got, err := BrokenLinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`README.md:4: link "docs/b.md": docs/b.md does not exist`,
		`README.md:4: link "docs/a.md#nope": docs/a.md has no anchor #nope`,
		`README.md:4: link "../x.md": leaves the repository`,
		`docs/a.md:9: link "../README.md#alm-1": README.md has no anchor #alm-1`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSlug: GitHub's anchors for headings as the documents write them.
func TestSlug(t *testing.T) {
	for title, want := range map[string]string{
		"`make bench-scale-10k`":                       "make-bench-scale-10k",
		"Upgrade previews, approval and deprecations":  "upgrade-previews-approval-and-deprecations",
		"The API (group `operators.alm.dev/v1alpha1`)": "the-api-group-operatorsalmdevv1alpha1",
		"Publish → AppType → upgrade":                  "publish--apptype--upgrade",
		"**Bold** and [a link](x.md)":                  "bold-and-a-link",
		"snake_case_name":                              "snake_case_name",
	} {
		if got := Slug(title); got != want {
			t.Errorf("Slug(%q) = %q, want %q", title, got, want)
		}
	}
}
