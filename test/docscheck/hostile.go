// Package docscheck holds the checks that keep the documents (README.md, CONTRIBUTING.md, docs/) honest: every
// relative link and #anchor resolves, every measured figure is a named row of docs/measured.md and equals it, and
// the hostile-inputs table and the tests it names agree in both directions. Tests of other packages call it; it
// reads files and imports nothing of ALM's.
package docscheck

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// HostilePage is the hostile-inputs reference, relative to the module root.
const HostilePage = "docs/reference/hostile-inputs.md"

// HostileRow is one row of the hostile-inputs table (HostilePage).
type HostileRow struct {
	// Number is the row's number (the first column).
	Number int
	// Text is the whole row as written.
	Text string
	// Tests are the backticked test names of the last column, e.g. "TestHostileInput/fifo-in-manifests".
	Tests []string
}

var testRef = regexp.MustCompile("`(Test[A-Za-z0-9_]+(?:/[^`]+)?)`")

// HostileRows reads the numbered rows of the hostile-inputs table of the page at path (HostilePage from the test's
// directory).
func HostileRows(path string) ([]HostileRow, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rows []HostileRow
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		cells := strings.Split(line, " | ")
		n, err := strconv.Atoi(strings.TrimPrefix(cells[0], "| "))
		if err != nil {
			continue // the header
		}
		row := HostileRow{Number: n, Text: line}
		for _, m := range testRef.FindAllStringSubmatch(cells[len(cells)-1], -1) {
			row.Tests = append(row.Tests, m[1])
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no numbered table rows", path)
	}
	return rows, sc.Err()
}

// CrossCheck compares the hostile rows with the cases of one test, in both directions: every case is named
// by a row (as `test/case`), and every `test/...` a row names is a case. prefix is what comes between the test's
// name and the case (e.g. "catalog/" for TestHostileImagesRefused). It returns one line per disagreement.
func CrossCheck(rows []HostileRow, test, prefix string, cases []string) []string {
	want := map[string]bool{}
	for _, c := range cases {
		want[test+"/"+prefix+c] = true
	}
	named := map[string]bool{}
	var problems []string
	for _, r := range rows {
		for _, ref := range r.Tests {
			if !strings.HasPrefix(ref, test+"/") {
				continue
			}
			named[ref] = true
			if !want[ref] {
				problems = append(problems, fmt.Sprintf(HostilePage+" row %d names `%s`, which %s has no case for", r.Number, ref, test))
			}
		}
	}
	for _, c := range cases {
		if ref := test + "/" + prefix + c; !named[ref] {
			problems = append(problems, fmt.Sprintf(HostilePage+": no row names `%s`", ref))
		}
	}
	return problems
}

// RowNaming is the row whose tests include ref, or nil.
func RowNaming(rows []HostileRow, ref string) *HostileRow {
	for i := range rows {
		for _, t := range rows[i].Tests {
			if t == ref {
				return &rows[i]
			}
		}
	}
	return nil
}
