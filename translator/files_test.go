package translator

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"slices"
	"strings"
	"testing"
)

// engineFiles are the package's files in reading order (doc.go): each
// uses only the top-level names of files after it.
var engineFiles = []string{
	"update.go", "update_output.go", "routepatch.go", "rejudge.go", "rejudge_xbackends.go", "retraffic.go", "xmeshes.go", "changes.go",
	"whole.go", "crlwants.go", "translator.go", "state.go", "gateway_objects.go", "memory.go",
	"emit_gateways.go", "emit_mesh.go", "ports.go", "emit_xbackends.go", "emit_policy.go", "traffic.go",
	"dataplane.go", "api.go", "aliases.go", "doc.go",
}

// TestFilesReadDownward fails when a file of the engine names a type,
// function, variable or constant declared in a file above it, or when a
// file is missing from the reading order. Methods and fields are not
// checked: their receivers' types are.
func TestFilesReadDownward(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	files := pkgs["translator"].Files
	declaredIn := map[string]string{}
	for path, f := range files {
		if !slices.Contains(engineFiles, path) {
			t.Errorf("%s is not in engineFiles: give it its place in the reading order (and in doc.go)", path)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					declaredIn[d.Name.Name] = path
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						declaredIn[s.Name.Name] = path
					case *ast.ValueSpec:
						for _, n := range s.Names {
							declaredIn[n.Name] = path
						}
					}
				}
			}
		}
	}
	for path, f := range files {
		at := slices.Index(engineFiles, path)
		var visit func(n ast.Node) bool
		visit = func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				ast.Inspect(sel.X, visit)
				return false // .Sel is a field, a method or another package's
			}
			check(t, fset, n, path, at, declaredIn)
			return true
		}
		ast.Inspect(f, visit)
	}
}

// check reports n when it is a name the parser left unresolved in its file
// (so another file's) declared in a file above at.
func check(t *testing.T, fset *token.FileSet, n ast.Node, path string, at int, declaredIn map[string]string) {
	id, ok := n.(*ast.Ident)
	if !ok || id.Obj != nil {
		return
	}
	from, ok := declaredIn[id.Name]
	if !ok || from == path {
		return
	}
	if i := slices.Index(engineFiles, from); i >= 0 && i < at {
		t.Errorf("%s: %s is declared in %s, above it in the reading order", fset.Position(id.Pos()), id.Name, from)
	}
}
