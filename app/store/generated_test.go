package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
	"unicode"
)

// TestNoQueryParameterHidesItsSQL reads the code sqlc generated into db:
// each method runs the package's constant named after it (InstallID runs
// installID), so a parameter of the same name (a query "VALUES ($1)" into
// a column install_id) would hide the SQL and send the value as the query.
// sqlc does not see it; rename the parameter in the query (@new_id).
func TestNoQueryParameterHidesItsSQL(t *testing.T) {
	files, err := filepath.Glob("db/*.sql.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no generated files in db/: %v", err)
	}
	methods := 0
	for _, f := range files {
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil {
				continue
			}
			methods++
			r := []rune(fn.Name.Name)
			r[0] = unicode.ToLower(r[0])
			constant := string(r)
			for _, p := range fn.Type.Params.List {
				for _, n := range p.Names {
					if n.Name == constant {
						t.Errorf("%s: %s's parameter %s hides the SQL constant of the same name: give the parameter another name in sql/queries (@new_id) and run make sqlc",
							filepath.Base(f), fn.Name.Name, n.Name)
					}
				}
			}
		}
	}
	if methods < 50 {
		t.Fatalf("read %d generated methods, want every query's", methods)
	}
}
