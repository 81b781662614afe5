package web

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestPagesReachProvidersThroughTheCore: the pages ask a backend what it
// offers through the core (snapshots.Backend's and the Service's methods),
// never through its provider (Backend.Snap, Backend.Boxes): no page calls
// a method of, or asserts a type on, a field named Snap or Boxes.
func TestPagesReachProvidersThroughTheCore(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var x ast.Expr
			switch n := n.(type) {
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
					x = sel.X
				}
			case *ast.TypeAssertExpr:
				x = n.X
			}
			if sel, ok := x.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Snap" || sel.Sel.Name == "Boxes") {
				t.Errorf("%s: the page reaches a provider directly", fset.Position(sel.Pos()))
			}
			return true
		})
	}
}
