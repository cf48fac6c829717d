// Package measured keeps docs/measured.md, the one file every measured figure of the project comes from. `make bench`
// and `make test-chaos` each write their table there as a section headed by the exact command, the date, the commit
// and the machine; documents quote the file by naming its rows (test/docscheck holds them to that).
//
// A section is delimited by HTML comments naming its command, so a run replaces only its own section: a full
// `make bench` replaces every bench section (a narrowed run's included), a narrowed one only the section of the same
// command.
package measured

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// Header says where, when and how a table was measured.
type Header struct {
	// Command is the exact command that measured it, e.g. "make bench".
	Command string
	// Started is when the command started; zero when unknown.
	Started time.Time
}

const intro = `# Measured figures

Generated: ` + "`make bench`" + ` and ` + "`make test-chaos`" + ` each replace their own section of this file with the table they
printed, headed by the exact command, the date, the commit and the machine. Do not edit it by hand; documents
quote it by naming its rows, and ` + "`go test ./test/docscheck`" + ` fails when a document states a measured figure that is not
its row's value here.
`

// Update writes table into the section of h.Command in the file at path (created when missing). kind is the
// command's family ("bench" or "chaos"): a section of the same family whose command starts with h.Command followed
// by a space (a narrowed run) is replaced too.
func Update(path, kind string, h Header, table string) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	sections := parse(string(old))
	body := heading(h) + "\n" + strings.TrimRight(table, "\n") + "\n"
	out := []section{}
	placed := false
	for _, s := range sections {
		replace := s.command == h.Command || s.kind == kind && strings.HasPrefix(s.command, h.Command+" ")
		switch {
		case replace && !placed:
			out = append(out, section{kind: kind, command: h.Command, body: body})
			placed = true
		case !replace:
			out = append(out, s)
		}
	}
	if !placed {
		out = append(out, section{kind: kind, command: h.Command, body: body})
	}
	var buf bytes.Buffer
	buf.WriteString(intro)
	for _, s := range out {
		fmt.Fprintf(&buf, "\n<!-- begin %s: %s -->\n%s<!-- end %s: %s -->\n", s.kind, s.command, s.body, s.kind, s.command)
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

type section struct {
	kind, command, body string
}

// parse reads the sections of a file Update wrote.
func parse(text string) []section {
	var out []section
	for {
		i := strings.Index(text, "<!-- begin ")
		if i < 0 {
			return out
		}
		text = text[i+len("<!-- begin "):]
		j := strings.Index(text, " -->\n")
		if j < 0 {
			return out
		}
		kind, command, _ := strings.Cut(text[:j], ": ")
		text = text[j+len(" -->\n"):]
		end := "<!-- end " + kind + ": " + command + " -->"
		k := strings.Index(text, end)
		if k < 0 {
			return out
		}
		out = append(out, section{kind: kind, command: command, body: text[:k]})
		text = text[k+len(end):]
	}
}

// heading is the section's title and the line that says where, when and how it was measured.
func heading(h Header) string {
	now := time.Now().UTC()
	took := ""
	if !h.Started.IsZero() {
		took = fmt.Sprintf(", took %s", now.Sub(h.Started).Round(time.Second))
	}
	return fmt.Sprintf("## `%s`\n\nMeasured %s at commit %s on %s%s. Command: `%s`.\n",
		h.Command, now.Format("2006-01-02 15:04 MST"), Commit(), Machine(), took, h.Command)
}

// Commit is the checked-out commit, with the files that differ from it when the work tree is not clean.
func Commit() string {
	out, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown (not a git work tree)"
	}
	commit := strings.TrimSpace(string(out))
	status, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	if err != nil || len(bytes.TrimSpace(status)) == 0 {
		return commit
	}
	var files []string
	for _, line := range strings.Split(strings.TrimRight(string(status), "\n"), "\n") {
		if f := strings.TrimSpace(line[min(3, len(line)):]); f != "docs/measured.md" {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return commit
	}
	return fmt.Sprintf("%s with uncommitted changes to %s", commit, strings.Join(files, ", "))
}

// Machine names the processor, its cores, the OS and architecture, the Go version and the load average.
func Machine() string {
	load := "load average unknown"
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(data)); len(f) >= 3 {
			load = "load average " + strings.Join(f[:3], " / ") + " at the end"
		}
	}
	return fmt.Sprintf("%s, %d cores, %s/%s, %s, %s", cpuModel(), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(), load)
}

// cpuModel is the processor's name from /proc/cpuinfo, or "an unknown CPU".
func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "an unknown CPU"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if name, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
		}
	}
	return "an unknown CPU"
}
