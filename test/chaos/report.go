// Package chaos holds what the chaos scenarios (make test-chaos) share: the switch that runs them and the table
// they print. The scenarios live in the packages below this one; `go test ./...` skips them unless ALM_CHAOS=1.
package chaos

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// EnvRun switches the chaos scenarios on; EnvReport names the file each scenario appends its row to.
const (
	EnvRun    = "ALM_CHAOS"
	EnvReport = "ALM_CHAOS_REPORT"
)

// Require skips t unless ALM_CHAOS=1 (make test-chaos sets it).
func Require(t testing.TB) {
	t.Helper()
	if os.Getenv(EnvRun) != "1" {
		t.Skipf("chaos scenario: run it with make test-chaos (or %s=1)", EnvRun)
	}
}

// Row is one scenario's line in the table.
type Row struct {
	// Scenario says what was broken and when, e.g. "ALM SIGKILL during install".
	Scenario string `json:"scenario"`
	// Runs and Converged count the runs, and those that reached the expected end state with every check passing.
	Runs      int `json:"runs"`
	Converged int `json:"converged"`
	// Slowest is the longest time from the fault to the end state among the converged runs.
	Slowest time.Duration `json:"slowest"`
	// Checks lists what was asserted of the end state, e.g. "1 OperatorVersion Succeeded, UIDs kept, 0 orphans".
	Checks string `json:"checks"`
	// Notes carries measured figures worth seeing beside the row (e.g. "Konnect calls 2,311; 5xx 231").
	Notes string `json:"notes,omitempty"`
}

// Record appends r to the report file named by ALM_CHAOS_REPORT (nothing when unset) and logs it on t.
func Record(t testing.TB, r Row) {
	t.Helper()
	t.Logf("chaos: %s: %d/%d converged, slowest %s; %s; %s", r.Scenario, r.Converged, r.Runs, r.Slowest.Round(time.Millisecond), r.Checks, r.Notes)
	path := os.Getenv(EnvReport)
	if path == "" {
		return
	}
	line, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatalf("chaos report %s: %v", path, err)
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		t.Fatalf("chaos report %s: %v", path, err)
	}
}

// WriteTable reads the rows in the report r and writes them as one Markdown table.
func WriteTable(w io.Writer, r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "| Scenario | Converged | Slowest convergence | Checked | Figures |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var row Row
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			return fmt.Errorf("chaos report line %d: %w", i+1, err)
		}
		fmt.Fprintf(w, "| %s | %d/%d | %s | %s | %s |\n", row.Scenario, row.Converged, row.Runs,
			row.Slowest.Round(10*time.Millisecond), row.Checks, row.Notes)
	}
	return nil
}
