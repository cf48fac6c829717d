package docscheck

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// Files are the documents the checks read, relative to the module root: README.md, CONTRIBUTING.md and every
// Markdown file under docs/.
func Files(root string) ([]string, error) {
	files := []string{"README.md", "CONTRIBUTING.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
			return err
		}
		rel, err := filepath.Rel(root, path)
		files = append(files, filepath.ToSlash(rel))
		return err
	})
	sort.Strings(files[2:])
	return files, err
}

// Line is one line of a document with what the checks must not read blanked out.
type Line struct {
	// Number is the line's number, from 1.
	Number int
	// Text is the line with inline code spans and HTML comments removed; lines of fenced code blocks are not Lines.
	Text string
}

var (
	codeSpan    = regexp.MustCompile("`+[^`]*`+")
	htmlComment = regexp.MustCompile(`<!--.*?-->`)
)

// Prose is text's lines outside fenced code blocks, inline code and HTML comments taken out. Headings are kept.
func Prose(text string) []Line {
	lines := outsideFences(text)
	for i, l := range lines {
		lines[i].Text = htmlComment.ReplaceAllString(codeSpan.ReplaceAllString(l.Text, ""), "")
	}
	return lines
}

// outsideFences is text's lines outside fenced code blocks (``` or ~~~), as they are.
func outsideFences(text string) []Line {
	var out []Line
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		out = append(out, Line{Number: i + 1, Text: line})
	}
	return out
}

var (
	heading  = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	htmlID   = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	mdLink   = regexp.MustCompile(`\[([^\]]*)\]\(([^)\s]+)\)`)
	mdMarkup = regexp.MustCompile(`\*{1,3}|\[([^\]]*)\]\([^)]*\)|<[^>]+>`)
)

// Anchors are the anchors GitHub gives a document: one per heading (Slug, with -1, -2... for repeats) and one per
// <a id="..."> or <a name="...">.
func Anchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, l := range outsideFences(text) {
		line := l.Text
		for _, m := range htmlID.FindAllStringSubmatch(line, -1) {
			anchors[m[1]] = true
		}
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		slug := Slug(m[1])
		if n := seen[slug]; n > 0 {
			anchors[slug+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// Slug is the anchor GitHub makes of a heading's text: markup removed (a link keeps its text), lower case, every
// character that is not a letter, a number, a space, '-' or '_' dropped, spaces turned into '-'.
func Slug(title string) string {
	title = mdMarkup.ReplaceAllStringFunc(title, func(s string) string {
		if m := mdLink.FindStringSubmatch(s); m != nil {
			return m[1]
		}
		if strings.HasPrefix(s, "<") || strings.Trim(s, "*") == "" {
			return ""
		}
		return s
	})
	title = strings.ReplaceAll(title, "`", "")
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || isLetterOrDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isLetterOrDigit: what GitHub keeps of a heading besides ' ', '-' and '_': letters, marks and numbers of any script.
func isLetterOrDigit(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsNumber(r)
}

func readFile(root, rel string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, rel))
	return string(b), err
}
