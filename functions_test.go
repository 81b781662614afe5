package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxFuncLines is the most lines a function of the core, the backends, the
// web or the API may take, from its func keyword to its closing brace.
const maxFuncLines = 100

// oneThing is the functions over maxFuncLines that are truly one thing,
// each with its reason; keyed "file Recv.Name" as funcLengths names them.
var oneThing = map[string]string{
	"app/web/routes.go Server.router": "the web's route table: every route one line, read in one place",
}

// TestFunctionsDoOneThing: in the core (app/snapshots, app/operations), the
// backends (providers/...), the web (app/web) and the API (app/api), no
// function of non-test, non-generated code is over maxFuncLines lines, but
// the few in oneThing, which are one step each.
func TestFunctionsDoOneThing(t *testing.T) {
	t.Parallel()
	lengths, err := funcLengths("app/snapshots", "app/operations", "providers", "app/web", "app/api")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for name := range lengths {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		n := lengths[name]
		if _, ok := oneThing[name]; ok {
			continue
		}
		if n > maxFuncLines {
			t.Errorf("%s is %d lines, over %d: split it along the steps its comments name", name, n, maxFuncLines)
		}
	}
	for name := range oneThing {
		if _, ok := lengths[name]; !ok {
			t.Errorf("oneThing names %s, which is no longer there", name)
		}
	}
}

// funcLengths reads the Go files under roots, leaving out tests and
// generated files, and gives each function's length in lines by
// "file Recv.Name" (file relative to the module's root).
func funcLengths(roots ...string) (map[string]int, error) {
	lengths := make(map[string]int)
	fset := token.NewFileSet()
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				return fmt.Errorf("parse %s: %w", path, err)
			}
			if ast.IsGenerated(f) {
				return nil
			}
			for _, decl := range f.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				name := fn.Name.Name
				if fn.Recv != nil && len(fn.Recv.List) > 0 {
					name = recvName(fn.Recv.List[0].Type) + "." + name
				}
				lines := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
				lengths[filepath.ToSlash(path)+" "+name] = lines
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return lengths, nil
}

// recvName is the type a method's receiver names, without pointer or type
// parameters.
func recvName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.IndexListExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return "?"
}
