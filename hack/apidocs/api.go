// Package apidocs writes the generated reference pages of docs/reference: the API reference from the Go types of an
// API package (their doc comments and controller-tools markers, read from the source with go/ast), and a Markdown
// page of a command's flags from its --help output. `make docs` runs it; `make verify` fails when a page is stale.
package apidocs

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"regexp"
	"sort"
	"strings"
)

// Type is one Go type of an API package as the reference shows it.
type Type struct {
	Name, Doc string
	// Kind: the type is a top-level object (+kubebuilder:object:root, not a List).
	Kind bool
	// Markers are the type's controller-tools markers (printcolumn left out), e.g. "+kubebuilder:resource:shortName=at".
	Markers []string
	// Fields are the struct's fields; nil for a non-struct type.
	Fields []Field
	// Underlying is the Go type of a non-struct type (e.g. "string" for an enum).
	Underlying string
	// Values are the constants of the type, for enums.
	Values []string
}

// Field is one field of a struct type.
type Field struct {
	JSON, Type, Doc string
	Required        bool
	Markers         []string
}

var markerLine = regexp.MustCompile(`^\s*\+`)

// splitDoc separates a doc comment into its text and its markers.
func splitDoc(cg *ast.CommentGroup) (string, []string) {
	if cg == nil {
		return "", nil
	}
	var text, markers []string
	for _, line := range strings.Split(cg.Text(), "\n") {
		if markerLine.MatchString(line) {
			markers = append(markers, strings.TrimSpace(line))
			continue
		}
		text = append(text, line)
	}
	return strings.TrimSpace(strings.Join(text, " ")), markers
}

// Load reads the types of the Go package in fsys (the files of one directory, tests and generated files left out).
func Load(fsys fs.FS) (group, version string, types []Type, err error) {
	fset := token.NewFileSet()
	names, err := fs.Glob(fsys, "*.go")
	if err != nil {
		return "", "", nil, err
	}
	consts := map[string][]string{}
	var byName = map[string]*Type{}
	var order []string
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "zz_generated") {
			continue
		}
		src, err := fs.ReadFile(fsys, name)
		if err != nil {
			return "", "", nil, err
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			return "", "", nil, err
		}
		if g := groupName(f); g != "" {
			group = g
		}
		version = f.Name.Name
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, s := range gd.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					doc := s.Doc
					if doc == nil {
						doc = gd.Doc
					}
					t := newType(s, doc)
					byName[t.Name] = &t
					order = append(order, t.Name)
				case *ast.ValueSpec:
					if id, ok := s.Type.(*ast.Ident); ok && gd.Tok == token.CONST && len(s.Values) == 1 {
						if lit, ok := s.Values[0].(*ast.BasicLit); ok {
							consts[id.Name] = append(consts[id.Name], lit.Value)
						}
					}
				}
			}
		}
	}
	for _, n := range order {
		t := byName[n]
		if t.Fields == nil {
			t.Values = consts[n]
		}
		types = append(types, *t)
	}
	return group, version, types, nil
}

// groupName is the +groupName marker of a package's doc comment.
func groupName(f *ast.File) string {
	for _, cg := range append([]*ast.CommentGroup{f.Doc}, f.Comments...) {
		if cg == nil {
			continue
		}
		for _, l := range strings.Split(cg.Text(), "\n") {
			if g, ok := strings.CutPrefix(strings.TrimSpace(l), "+groupName="); ok {
				return g
			}
		}
	}
	return ""
}

func newType(s *ast.TypeSpec, doc *ast.CommentGroup) Type {
	t := Type{Name: s.Name.Name}
	var markers []string
	t.Doc, markers = splitDoc(doc)
	for _, m := range markers {
		switch {
		case m == "+kubebuilder:object:root=true":
			t.Kind = !strings.HasSuffix(t.Name, "List")
		case strings.HasPrefix(m, "+kubebuilder:printcolumn"), strings.HasPrefix(m, "+kubebuilder:object:generate"):
		default:
			t.Markers = append(t.Markers, m)
		}
	}
	st, ok := s.Type.(*ast.StructType)
	if !ok {
		t.Underlying = typeString(s.Type)
		return t
	}
	t.Fields = []Field{}
	for _, f := range st.Fields.List {
		t.Fields = append(t.Fields, newField(f))
	}
	return t
}

func newField(f *ast.Field) Field {
	fd := Field{Type: typeString(f.Type)}
	var markers []string
	fd.Doc, markers = splitDoc(f.Doc)
	tag := ""
	if f.Tag != nil {
		tag = f.Tag.Value
	}
	if m := regexp.MustCompile(`json:"([^"]*)"`).FindStringSubmatch(tag); m != nil {
		name, opts, _ := strings.Cut(m[1], ",")
		fd.JSON = name
		if strings.Contains(opts, "inline") {
			fd.JSON = "(inline)"
		}
		fd.Required = !strings.Contains(opts, "omitempty")
	}
	for _, m := range markers {
		switch m {
		case "+required":
			fd.Required = true
		case "+optional":
			fd.Required = false
		default:
			fd.Markers = append(fd.Markers, strings.TrimPrefix(m, "+kubebuilder:"))
		}
	}
	return fd
}

// typeString renders a field's Go type as the reference shows it.
func typeString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return typeString(e.X)
	case *ast.ArrayType:
		return "[]" + typeString(e.Elt)
	case *ast.MapType:
		return "map[" + typeString(e.Key) + "]" + typeString(e.Value)
	case *ast.SelectorExpr:
		return typeString(e.X) + "." + e.Sel.Name
	}
	return fmt.Sprintf("%T", e)
}

// sortedKinds are the names of the kinds first, then the other types, each in source order.
func sortedKinds(types []Type) []Type {
	out := append([]Type(nil), types...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Kind && !out[j].Kind })
	return out
}
