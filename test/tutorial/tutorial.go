// Package tutorial reads the commands of docs/tutorial.md so that the end-to-end tests run them as written: every
// fenced block whose info string is "sh tutorial", in order, one shell command per logical line (a here-document
// and lines ending in a backslash stay with their command).
package tutorial

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Page is the tutorial, relative to the module root.
const Page = "docs/tutorial.md"

// Command is one shell command of the tutorial.
type Command struct {
	// Line is the command's first line in the page, from 1.
	Line int
	// Text is the command as written, here-document included.
	Text string
}

// Commands reads the ordered commands of the tutorial under the module root.
func Commands(root string) ([]Command, error) {
	data, err := os.ReadFile(filepath.Join(root, Page))
	if err != nil {
		return nil, err
	}
	return Extract(string(data))
}

// Extract returns the commands of the "sh tutorial" blocks of a Markdown text.
func Extract(text string) ([]Command, error) {
	var out []Command
	var cur *Command
	in, heredoc := false, ""
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case !in:
			in = trimmed == "```sh tutorial"
		case heredoc != "":
			cur.Text += "\n" + line
			if trimmed == heredoc {
				out, cur, heredoc = append(out, *cur), nil, ""
			}
		case trimmed == "```":
			if cur != nil {
				return nil, fmt.Errorf("%s:%d: the block ends inside a command", Page, cur.Line)
			}
			in = false
		case cur != nil:
			cur.Text += "\n" + line
			if !strings.HasSuffix(trimmed, `\`) {
				out, cur = append(out, *cur), nil
			}
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
		default:
			cur = &Command{Line: i + 1, Text: line}
			if h := heredocEnd(line); h != "" {
				heredoc = h
			} else if !strings.HasSuffix(trimmed, `\`) {
				out, cur = append(out, *cur), nil
			}
		}
	}
	if in || cur != nil {
		return nil, fmt.Errorf("%s: a tutorial block is not closed", Page)
	}
	return out, nil
}

// heredocEnd is the delimiter of a here-document the line starts (<<'YAML', <<EOF, <<-END), or "".
func heredocEnd(line string) string {
	i := strings.Index(line, "<<")
	if i < 0 {
		return ""
	}
	f := strings.Fields(strings.TrimPrefix(line[i+2:], "-"))
	if len(f) == 0 {
		return ""
	}
	return strings.Trim(f[0], `'"`)
}
