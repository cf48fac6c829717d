package docscheck

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// BrokenLinks lists every relative link of the documents (Files) that does not resolve: a file or directory that
// does not exist, or an #anchor the target document does not have (GitHub's anchor rules, Anchors). Links with a
// scheme (https:, mailto:) are not followed.
func BrokenLinks(root string) ([]string, error) {
	files, err := Files(root)
	if err != nil {
		return nil, err
	}
	docs := map[string]string{}
	read := func(rel string) (string, error) {
		if text, ok := docs[rel]; ok {
			return text, nil
		}
		text, err := readFile(root, rel)
		docs[rel] = text
		return text, err
	}
	var problems []string
	for _, file := range files {
		text, err := read(file)
		if err != nil {
			return nil, err
		}
		for _, l := range Prose(text) {
			for _, m := range mdLink.FindAllStringSubmatch(l.Text, -1) {
				if p := checkLink(root, file, m[2], read); p != "" {
					problems = append(problems, fmt.Sprintf("%s:%d: link %q: %s", file, l.Number, m[2], p))
				}
			}
		}
	}
	return problems, nil
}

// checkLink says what is wrong with target, a link of the document file, or "".
func checkLink(root, file, target string, read func(string) (string, error)) string {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return ""
	}
	rel, anchor, _ := strings.Cut(target, "#")
	if rel == "" {
		rel = file
	} else {
		rel = path.Clean(path.Join(path.Dir(file), rel))
	}
	if strings.HasPrefix(rel, "../") || rel == ".." {
		return "leaves the repository"
	}
	fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return fmt.Sprintf("%s does not exist", rel)
	}
	if anchor == "" {
		return ""
	}
	if fi.IsDir() || !strings.HasSuffix(rel, ".md") {
		return fmt.Sprintf("an anchor into %s, which is not a Markdown document", rel)
	}
	text, err := read(rel)
	if err != nil {
		return err.Error()
	}
	if !Anchors(text)[anchor] {
		return fmt.Sprintf("%s has no anchor #%s", rel, anchor)
	}
	return ""
}
