package measured

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUpdate: a run replaces its own section and keeps the others; a full run replaces the narrowed runs of its
// command too.
func TestUpdate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "measured.md")
	steps := []struct {
		kind, command, table string
		want, gone           []string
	}{
		{"bench", "make bench BENCH='Scale'", "| A | 1 |\n", []string{"## `make bench BENCH='Scale'`", "| A | 1 |"}, nil},
		{"chaos", "make test-chaos", "| C | 3/3 |\n", []string{"| A | 1 |", "| C | 3/3 |"}, nil},
		{"bench", "make bench BENCH='Scale'", "| A | 2 |\n", []string{"| A | 2 |", "| C | 3/3 |"}, []string{"| A | 1 |"}},
		{"bench", "make bench", "| B | 4 |\n", []string{"## `make bench`", "| B | 4 |", "| C | 3/3 |"}, []string{"| A | 2 |", "BENCH='Scale'"}},
		{"chaos", "make test-chaos", "| C | 2/3 |\n", []string{"| B | 4 |", "| C | 2/3 |"}, []string{"| C | 3/3 |"}},
	}
	for i, s := range steps {
		if err := Update(path, s.kind, Header{Command: s.command}, s.table); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if !strings.HasPrefix(text, intro) || strings.Count(text, "\n\nMeasured ") != len(parse(text)) {
			t.Errorf("step %d: want the intro and one heading per section, got:\n%s", i, text)
		}
		for _, w := range s.want {
			if !strings.Contains(text, w) {
				t.Errorf("step %d: want %q in:\n%s", i, w, text)
			}
		}
		for _, g := range s.gone {
			if strings.Contains(text, g) {
				t.Errorf("step %d: %q should be gone from:\n%s", i, g, text)
			}
		}
	}
}
