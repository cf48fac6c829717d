package speccheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Which operations of the document a client calls, found in its source: every selector `<x>.<Field>.<Method>` where
// Field is a field of the SDK's root struct (sdkkonnectgo.SDK: Services, ControlPlanes, ...) and Method a method of
// that field's type, mapped to its operation through the operationId the SDK's generated method names in its hook
// context (`OperationID: "create-service"`). It reads the SDK's source from the module, as Load reads the document.

// SDKCall is one SDK method a client calls and the operation it is.
type SDKCall struct {
	// Method is "Services.CreateService"; Files the client's files (relative to the root given) that call it.
	Method    string
	Files     []string
	Operation Operation
}

// SDKCalls returns the SDK methods called by the non-test Go files under dirs (relative to root), sorted by
// operationId. A method whose operationId the document lacks is an error.
func (s *Spec) SDKCalls(root string, dirs ...string) ([]SDKCall, error) {
	methods, err := sdkMethods(filepath.Dir(s.Path))
	if err != nil {
		return nil, err
	}
	byID := s.operationsByID()
	calls := map[string]*SDKCall{}
	for _, dir := range dirs {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			return selectorsIn(path, func(field, method string) error {
				id, ok := methods[field+"."+method]
				if !ok {
					return nil
				}
				c := calls[field+"."+method]
				if c == nil {
					op, ok := byID[id]
					if !ok {
						return fmt.Errorf("speccheck: %s calls %s.%s, operation %q, which the document lacks", rel, field, method, id)
					}
					c = &SDKCall{Method: field + "." + method, Operation: op}
					calls[c.Method] = c
				}
				if len(c.Files) == 0 || c.Files[len(c.Files)-1] != rel {
					c.Files = append(c.Files, rel)
				}
				return nil
			})
		})
		if err != nil {
			return nil, err
		}
	}
	out := make([]SDKCall, 0, len(calls))
	for _, c := range calls {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Operation.ID < out[j].Operation.ID })
	return out, nil
}

// selectorsIn calls f with the last two names of every selector chain `x.A.B` in the Go file path.
func selectorsIn(path string, f func(field, method string) error) error {
	file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	var ferr error
	ast.Inspect(file, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || ferr != nil {
			return ferr == nil
		}
		if inner, ok := sel.X.(*ast.SelectorExpr); ok {
			ferr = f(inner.Sel.Name, sel.Sel.Name)
		}
		return true
	})
	return ferr
}

var operationIDPattern = regexp.MustCompile(`OperationID:\s+("[^"]+")`)

// sdkMethods maps "Field.Method" of the SDK in dir (Services.CreateService) to the method's operationId.
func sdkMethods(dir string) (map[string]string, error) {
	fset := token.NewFileSet()
	root, err := parser.ParseFile(fset, filepath.Join(dir, "sdk.go"), nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	fieldsOfType := map[string][]string{} // Services -> [Services]
	ast.Inspect(root, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "SDK" {
			return true
		}
		for _, field := range ts.Type.(*ast.StructType).Fields.List {
			if star, ok := field.Type.(*ast.StarExpr); ok {
				if id, ok := star.X.(*ast.Ident); ok && len(field.Names) == 1 {
					fieldsOfType[id.Name] = append(fieldsOfType[id.Name], field.Names[0].Name)
				}
			}
		}
		return false
	})
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if !strings.Contains(string(src), "OperationID:") {
			continue
		}
		if err := methodOperations(fset, path, src, fieldsOfType, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// methodOperations adds the operationIds of the SDK methods in one file.
func methodOperations(fset *token.FileSet, path string, src []byte, fieldsOfType map[string][]string, out map[string]string) error {
	file, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	for _, decl := range file.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 || fn.Body == nil {
			continue
		}
		star, ok := fn.Recv.List[0].Type.(*ast.StarExpr)
		if !ok {
			continue
		}
		recv, ok := star.X.(*ast.Ident)
		if !ok || len(fieldsOfType[recv.Name]) == 0 {
			continue
		}
		m := operationIDPattern.FindSubmatch(src[fset.Position(fn.Body.Pos()).Offset:fset.Position(fn.Body.End()).Offset])
		if m == nil {
			continue
		}
		id, err := strconv.Unquote(string(m[1]))
		if err != nil {
			return err
		}
		for _, field := range fieldsOfType[recv.Name] {
			out[field+"."+fn.Name.Name] = id
		}
	}
	return nil
}

// operationsByID indexes the document's operations by operationId.
func (s *Spec) operationsByID() map[string]Operation {
	out := map[string]Operation{}
	for path, item := range s.doc.Paths.Map() {
		for method, op := range item.Operations() {
			out[op.OperationID] = Operation{Method: method, Path: path, ID: op.OperationID}
		}
	}
	return out
}

// Route returns the operation a server's route serves: method and a path template in net/http's ServeMux syntax
// (/v2/control-planes/{controlPlaneId}). ok is false when the document has no such operation.
func (s *Spec) Route(method, template string) (Operation, bool) {
	path := regexp.MustCompile(`\{[^}/]+\}`).ReplaceAllString(template, "00000000-0000-4000-8000-000000000000")
	req, err := http.NewRequest(method, path, nil)
	if err != nil {
		return Operation{}, false
	}
	route, _, err := s.router.FindRoute(req)
	if err != nil {
		return Operation{}, false
	}
	return Operation{Method: route.Method, Path: route.Path, ID: route.Operation.OperationID}, true
}

// ConstKeywords returns the schemas of op (parameters, request body, answers) that use `const`, which the 3.0
// treatment of the document (treatAsOpenAPI30) does not check; empty when none does.
func (s *Spec) ConstKeywords(op Operation) []string {
	item := s.doc.Paths.Value(op.Path)
	if item == nil || item.GetOperation(op.Method) == nil {
		return nil
	}
	o := item.GetOperation(op.Method)
	var found []string
	seen := map[*openapi3.Schema]bool{}
	var walk func(where string, ref *openapi3.SchemaRef)
	walk = func(where string, ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		v := ref.Value
		seen[v] = true
		if v.Const != nil {
			found = append(found, where)
		}
		for name, p := range v.Properties {
			walk(where+"/"+name, p)
		}
		for _, list := range []openapi3.SchemaRefs{v.AllOf, v.AnyOf, v.OneOf} {
			for _, sub := range list {
				walk(where, sub)
			}
		}
		walk(where+"/[]", v.Items)
		walk(where+"/not", v.Not)
		walk(where+"/*", v.AdditionalProperties.Schema)
	}
	for _, p := range append(item.Parameters, o.Parameters...) {
		if p.Value != nil {
			walk("parameter "+p.Value.Name, p.Value.Schema)
		}
	}
	if o.RequestBody != nil && o.RequestBody.Value != nil {
		for ct, mt := range o.RequestBody.Value.Content {
			walk("request "+ct, mt.Schema)
		}
	}
	for code, r := range o.Responses.Map() {
		if r.Value != nil {
			for ct, mt := range r.Value.Content {
				walk("answer "+code+" "+ct, mt.Schema)
			}
		}
	}
	return found
}
