// Command apidocs writes a generated reference page of docs/reference (make docs):
//
//	apidocs api -out docs/reference/api.md -title "API reference" DIR...   # the Go types of API packages
//	apidocs flags -out docs/reference/flags.md -title "..." NAME=HELPFILE... # commands' flags from their --help
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/almproject/alm/hack/apidocs"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: apidocs api|flags -out FILE -title TITLE ARGS...")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	out := fs.String("out", "", "page to write")
	title := fs.String("title", "Reference", "the page's title")
	intro := fs.String("intro", "", "a paragraph under the title (flags)")
	_ = fs.Parse(os.Args[2:])
	var buf bytes.Buffer
	var err error
	switch os.Args[1] {
	case "api":
		err = api(&buf, *title, fs.Args())
	case "flags":
		err = flags(&buf, *title, *intro, fs.Args())
	default:
		err = fmt.Errorf("unknown page %q", os.Args[1])
	}
	if err == nil {
		err = os.WriteFile(*out, buf.Bytes(), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "apidocs:", err)
		os.Exit(1)
	}
}

func api(buf *bytes.Buffer, title string, dirs []string) error {
	var pages []apidocs.Page
	for _, dir := range dirs {
		group, version, types, err := apidocs.Load(os.DirFS(dir))
		if err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		pages = append(pages, apidocs.Page{Group: group, Version: version, Types: types, Source: filepath.ToSlash(dir)})
	}
	return apidocs.Render(buf, title, pages)
}

func flags(buf *bytes.Buffer, title, intro string, args []string) error {
	var commands []apidocs.Command
	for _, a := range args {
		name, file, ok := strings.Cut(a, "=")
		if !ok {
			return fmt.Errorf("%q: want NAME=HELPFILE", a)
		}
		help, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		commands = append(commands, apidocs.Command{Name: name, Help: string(help)})
	}
	return apidocs.RenderFlags(buf, title, intro, commands)
}
