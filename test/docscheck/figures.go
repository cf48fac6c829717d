package docscheck

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// MeasuredFile is where every measured figure lives (hack/measured writes it), relative to the module root.
const MeasuredFile = "docs/measured.md"

// A measured figure in a document is written as the number and its unit followed by a link to its row of
// docs/measured.md: the link's text is the row's first cell, its target the file and, optionally, the anchor of the
// section (the command that measured it), e.g.
//
//	ALM's peak RSS was 355 MB ([Scale 10k: ALM peak RSS (MB; goal ≤ 300)](measured.md#make-bench-scale-10k)).
//
// The number must equal one of the row's measured values: a number of the row's cells other than the first, the
// targets ("target ≤ 300"), bounds and versions excluded. A number with a unit of measurement (MB, MiB, s, ms, ns, x,
// ×, %, req...) and no row link after it is a problem, unless its sentence says it is a bound, a limit or a setting
// before it (≤, ≥, <, >, "at most", "up to", "within", "every", "default", "limit", "timeout", "inject"...,
// boundWords). Inline code and fenced code blocks (quoted output, dated where quoted) are never read.

var (
	figure = regexp.MustCompile(`(^|[^\p{L}\d.,_/-])(\d[\d,]*(?:\.\d+)?)\s?` +
		`(MB|MiB|GB|GiB|KB|KiB|kB|ms|ns|µs|s|min|x|×|%|req(?:uests)?(?:/\w+)?|calls)` + `(?:[^\p{L}\d]|$)`)
	rowRef = regexp.MustCompile(`^\s*\(?\s*\[([^\]]+)\]\(([^)\s]*measured\.md)(?:#([^)\s]*))?\)`)
	anyRow = regexp.MustCompile(`\[([^\]]+)\]\(([^)\s]*measured\.md)(?:#([^)\s]*))?\)`)
	// boundWords make every number after them in the same sentence a bound, a limit or a setting, not a measurement.
	boundWords = regexp.MustCompile(`(?i)(≤|≥|<|>|\bat most\b|\bat least\b|\bup to\b|\bwithin\b|\bevery\b|\bdefault|\bbounds?\b|` +
		`\blimits?\b|\bmax(imum)?\b|\bmin(imum)?\b|\btimeout\b|\binject|\bflags?\b|\brefused\b|\ballowed\b|\bexceed|\bbudget\b|\bfloor\b|\btarget\b|\bgoal\b|` +
		`\bmore than\b|\blarger than\b|\bpast\b|\bbomb\b|\bholding\b|\bretried\b|\bbackoff\b|\bdoubl|\bdeadline\b|\bwindow\b|` +
		`\banswering\b|\blosing\b|\bthrottl|\blatency\b|\b(a|an)\s*$)`)
	sentenceEnd = regexp.MustCompile(`[.!?]\s|^\s*[-*|] |\|`)
	number      = regexp.MustCompile(`(^|[^\p{L}\d.,_-])(\d[\d,]*(?:\.\d+)?)`)
	excluded    = regexp.MustCompile(`(?i)(target|goal|bound|within|limit)\s*[≤≥<>]?\s*\d[\d,.]*`)
)

// Row is one row of a table of docs/measured.md.
type Row struct {
	// Heading: the row is a heading of the file (a link to it is not a figure's row).
	Heading bool
	// Section is the anchor of the section's heading (e.g. "make-bench").
	Section string
	// Name is the row's first cell.
	Name string
	// Values are its measured numbers, commas removed.
	Values []float64
}

// Rows reads the rows of the tables of docs/measured.md's text.
func Rows(measured string) []Row {
	var rows []Row
	section := ""
	for _, line := range strings.Split(measured, "\n") {
		if m := heading.FindStringSubmatch(line); m != nil {
			section = Slug(m[1])
			rows = append(rows, Row{Heading: true, Section: section, Name: m[1]})
			continue
		}
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		row := Row{Section: section, Name: strings.TrimSpace(cells[0])}
		for _, c := range cells[1:] {
			if strings.Contains(c, "not run") {
				continue
			}
			for _, m := range number.FindAllStringSubmatch(excluded.ReplaceAllString(c, ""), -1) {
				if v, err := parseNumber(m[2]); err == nil {
					row.Values = append(row.Values, v)
				}
			}
		}
		rows = append(rows, row)
	}
	return rows
}

func parseNumber(s string) (float64, error) {
	return strconv.ParseFloat(strings.TrimRight(strings.ReplaceAll(s, ",", ""), "."), 64)
}

// FigureProblems lists, for the document file (path relative to the module root) with text, every measured-looking
// figure without a row link, every figure whose row link names no row with a measured value, and every figure that
// does not equal its row's value.
func FigureProblems(file, text string, rows []Row) []string {
	var problems []string
	for _, l := range Prose(text) {
		for _, m := range anyRow.FindAllStringSubmatch(l.Text, -1) {
			if strings.HasSuffix(m[1], "measured.md") || isHeading(rows, m[1]) {
				continue // a link to the file or a section, not to a row
			}
			if _, err := lookup(rows, m[1], m[3]); err != nil {
				problems = append(problems, fmt.Sprintf("%s:%d: %v", file, l.Number, err))
			}
		}
		for _, idx := range figure.FindAllStringSubmatchIndex(l.Text, -1) {
			num, written := l.Text[idx[4]:idx[5]], l.Text[idx[4]:idx[7]]
			if isBound(l.Text[:idx[4]]) {
				continue
			}
			if p := checkFigure(num, written, l.Text[idx[7]:], rows); p != "" {
				problems = append(problems, fmt.Sprintf("%s:%d: %s", file, l.Number, p))
			}
		}
	}
	return problems
}

// isBound: the sentence that before starts (up to a figure) says the figures after it are bounds or settings.
func isBound(before string) bool {
	if ends := sentenceEnd.FindAllStringIndex(before, -1); len(ends) > 0 {
		before = before[ends[len(ends)-1][1]:]
	}
	return boundWords.MatchString(before)
}

// checkFigure checks one figure, the number num as written (with its unit), followed by rest.
func checkFigure(num, written, rest string, rows []Row) string {
	m := rowRef.FindStringSubmatch(strings.TrimLeft(rest, "]*"))
	if m == nil {
		return fmt.Sprintf("%s looks like a measurement but names no row of %s: write it as `%s ([<row>](%s#<section>))`",
			written, MeasuredFile, written, path.Base(MeasuredFile))
	}
	row, err := lookup(rows, m[1], m[3])
	if err != nil {
		return err.Error()
	}
	v, err := parseNumber(num)
	if err != nil {
		return err.Error()
	}
	for _, have := range row.Values {
		if have == v {
			return ""
		}
	}
	return fmt.Sprintf("%s is not what row %q of %s#%s measured (%v; targets are not measurements)",
		written, row.Name, MeasuredFile, row.Section, row.Values)
}

func isHeading(rows []Row, name string) bool {
	for _, r := range rows {
		if r.Heading && r.Name == name {
			return true
		}
	}
	return false
}

// lookup finds the row name in section (any section when empty) that holds measured values; with no section, the
// row must have values in exactly one.
func lookup(rows []Row, name, section string) (Row, error) {
	var found []Row
	for _, r := range rows {
		if r.Name == name && (section == "" || r.Section == section) && len(r.Values) > 0 {
			found = append(found, r)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) == 0 && section != "":
		return Row{}, fmt.Errorf("links to row %q of %s#%s, which that section does not have with a measured value", name, MeasuredFile, section)
	case len(found) == 0:
		return Row{}, fmt.Errorf("links to row %q, which %s does not have with a measured value", name, MeasuredFile)
	}
	return Row{}, fmt.Errorf("row %q is measured in %d sections of %s: name one with #<section>", name, len(found), MeasuredFile)
}
