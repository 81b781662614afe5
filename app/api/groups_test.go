package api_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoHandlerGroupHoldsTheServer: a group of handlers holds what its
// handlers use, never the server (which holds every dependency of the
// API): no type with a handler method (its first parameters an
// http.ResponseWriter and an *http.Request) other than the server has a
// field of the server's type, and a function that takes the server and a
// request only builds a group and hands the call on, in one statement.
func TestNoHandlerGroupHoldsTheServer(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	structs := map[string]*ast.StructType{}
	var funcs []*ast.FuncDecl
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok {
				if st, ok := ts.Type.(*ast.StructType); ok {
					structs[ts.Name.Name] = st
				}
			}
			return true
		})
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok {
				funcs = append(funcs, fn)
			}
		}
	}
	groups := map[string]bool{}
	for _, fn := range funcs {
		if fn.Recv == nil || !takesRequest(fn.Type.Params.List, 0) {
			continue
		}
		if name := typeName(fn.Recv.List[0].Type); name != "server" {
			groups[name] = true
		}
	}
	if len(groups) < 8 {
		t.Fatalf("found %d groups of handlers, want the 8 or more of app/api: %v", len(groups), groups)
	}
	for name := range groups {
		st, ok := structs[name]
		if !ok {
			t.Errorf("the group %s is not a struct", name)
			continue
		}
		for _, field := range st.Fields.List {
			if typeName(field.Type) == "server" {
				t.Errorf("the group %s holds the server (%s), and with it every dependency of the API: hold the seams its handlers use", name, fset.Position(field.Pos()))
			}
		}
	}
	for _, fn := range funcs {
		params := fn.Type.Params.List
		if fn.Recv != nil || len(params) < 3 || typeName(params[0].Type) != "server" || !takesRequest(params, 1) {
			continue
		}
		if len(fn.Body.List) != 1 {
			t.Errorf("%s (%s) takes the server and a request and does more than hand the call to a group: make it a group's handler", fn.Name.Name, fset.Position(fn.Pos()))
		}
	}
}

// takesRequest says whether params, from index i, start with an
// http.ResponseWriter and an *http.Request, each a parameter of its own.
func takesRequest(params []*ast.Field, i int) bool {
	if len(params) < i+2 {
		return false
	}
	return exprString(params[i].Type) == "http.ResponseWriter" && exprString(params[i+1].Type) == "*http.Request"
}

// typeName is the name of a type, through a pointer: "server" for *server.
func typeName(e ast.Expr) string {
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// exprString writes a parameter's type as the source does, for the
// selector and pointer types the test compares.
func exprString(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return "*" + exprString(x.X)
	case *ast.SelectorExpr:
		return exprString(x.X) + "." + x.Sel.Name
	case *ast.Ident:
		return x.Name
	}
	return ""
}
