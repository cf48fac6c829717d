package readmecheck

import (
	"fmt"
	"regexp"
	"strings"
)

// MeasuredFile is where every measured figure lives (hack/measured writes it), relative to the module root.
const MeasuredFile = "docs/measured.md"

// figureWords make a paragraph (or a table row) of the README a measured-figures context: what it states with
// numbers is a measurement, so each of its numbers must come from the generated file.
var figureWords = regexp.MustCompile(`(?i)\bmeasured\b|\bmeasures\b|\brss\b|\bheap\b|per install|per sync period|` +
	`\bconverged\b|convergence|\bbefore\b.*\bafter\b|\bwall\b|same run|\d\s*×|\bfaster\b|\bslower\b`)

var (
	codeSpan  = regexp.MustCompile("`[^`]*`")
	linkURL   = regexp.MustCompile(`\]\([^)]*\)`)
	numberTok = regexp.MustCompile(`(^|[^\p{L}\d.,_-])(\d[\d,]*(?:\.\d+)?)`)
	rowLink   = regexp.MustCompile(`\[([^\]]+)\]\(` + regexp.QuoteMeta(MeasuredFile) + `(?:#[^)]*)?\)`)
)

// Numbers are the numbers of text, commas removed ("10,000" is "10000"); a number glued to a letter before it
// (v1, k8s, go1.26) is a name, not a figure.
func Numbers(text string) []string {
	var out []string
	for _, m := range numberTok.FindAllStringSubmatch(text, -1) {
		out = append(out, strings.TrimRight(strings.ReplaceAll(m[2], ",", ""), "."))
	}
	return out
}

// Unbacked lists, for the README text readme and the generated file measured, every number the README states in a
// measured-figures context that the generated file does not hold, and every link to the generated file whose text
// is not one of its rows. Code blocks (quoted command output, each dated where it is quoted) and inline code are
// not figures; everything under "## Measured" is a measured-figures context.
func Unbacked(readme, measured string) []string {
	have := map[string]bool{}
	for _, n := range Numbers(measured) {
		have[n] = true
	}
	rows := map[string]bool{}
	for _, line := range strings.Split(measured, "\n") {
		if cells := strings.Split(line, " | "); len(cells) > 1 && strings.HasPrefix(line, "| ") {
			rows[strings.TrimPrefix(cells[0], "| ")] = true
		}
	}
	var problems []string
	for _, b := range blocks(readme) {
		for _, m := range rowLink.FindAllStringSubmatch(b.text, -1) {
			if m[1] != MeasuredFile && !rows[m[1]] {
				problems = append(problems, fmt.Sprintf("README.md:%d: links to a row %q that %s does not have", b.line, m[1], MeasuredFile))
			}
		}
		plain := rowLink.ReplaceAllString(codeSpan.ReplaceAllString(b.text, ""), "")
		plain = linkURL.ReplaceAllString(plain, "]")
		if !b.measured && !figureWords.MatchString(plain) {
			continue
		}
		for _, n := range Numbers(plain) {
			if !have[n] {
				problems = append(problems, fmt.Sprintf("README.md:%d: %s is stated in a measured-figures context but is not in %s: %q",
					b.line, n, MeasuredFile, abbreviate(b.text)))
			}
		}
	}
	return problems
}

type block struct {
	line     int
	text     string
	measured bool // under "## Measured"
}

// blocks splits markdown into paragraphs, list items and table rows (each a block), leaving out fenced code blocks and
// headings.
func blocks(text string) []block {
	var out []block
	var cur *block
	fenced, measured, header := false, false, false
	flush := func() {
		if cur != nil {
			out = append(out, *cur)
			cur = nil
		}
	}
	for i, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "```"):
			flush()
			fenced = !fenced
		case fenced:
		case strings.HasPrefix(line, "#"):
			flush()
			if strings.HasPrefix(line, "## ") {
				measured = line == "## Measured"
			}
		case strings.TrimSpace(line) == "":
			flush()
		case strings.HasPrefix(line, "|"):
			flush()
			if len(out) == 0 || out[len(out)-1].line != i || !strings.HasPrefix(out[len(out)-1].text, "|") {
				header = figureWords.MatchString(line) // a table whose header is about measurements
			}
			out = append(out, block{line: i + 1, text: line, measured: measured || header})
		default:
			if item := strings.TrimLeft(line, " "); strings.HasPrefix(item, "- ") || strings.HasPrefix(item, "* ") {
				flush() // each list item is a block of its own
			}
			if cur == nil {
				cur = &block{line: i + 1, measured: measured}
			}
			cur.text += line + "\n"
		}
	}
	flush()
	return out
}

func abbreviate(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 120 {
		return s[:117] + "..."
	}
	return s
}
