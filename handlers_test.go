package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// route is one line of a route table: its method, its path and the name
// of the handler it calls.
type route struct {
	method, path, handler string
}

// routeTable reads the route table in dir/routes.go: every r.Get, r.Post,
// r.Put and r.Delete whose handler handlerOf names.
func routeTable(t *testing.T, dir string) []route {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, "routes.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var routes []route
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 2 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		method := strings.ToUpper(sel.Sel.Name)
		switch method {
		case "GET", "POST", "PUT", "DELETE":
		default:
			return true
		}
		lit, ok := call.Args[0].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		handler := handlerOf(call.Args[1])
		if handler == "" {
			return true
		}
		path, err := strconv.Unquote(lit.Value)
		if err != nil {
			t.Fatal(err)
		}
		routes = append(routes, route{method: method, path: path, handler: handler})
		return true
	})
	return routes
}

// handlerOf is the name of a route's handler: a method of the server or
// of a type that holds it (s.resetBox, boxRoutes{s}.resetBox), or a
// function of it called from the route's one-line closure (func(w, r) {
// setHead(s, w, r) }); "" for anything else.
func handlerOf(e ast.Expr) string {
	switch h := e.(type) {
	case *ast.SelectorExpr:
		return h.Sel.Name
	case *ast.FuncLit:
		if len(h.Body.List) != 1 {
			return ""
		}
		stmt, ok := h.Body.List[0].(*ast.ExprStmt)
		if !ok {
			return ""
		}
		call, ok := stmt.X.(*ast.CallExpr)
		if !ok {
			return ""
		}
		if fn, ok := call.Fun.(*ast.Ident); ok {
			return fn.Name
		}
	}
	return ""
}

// methodFiles gives the file (its name, without .go) of each method and
// function declared in dir's non-test Go files.
func methodFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	out := map[string]string{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok {
				out[fn.Name.Name] = strings.TrimSuffix(filepath.Base(path), ".go")
			}
		}
	}
	return out
}

// camelWords splits a Go name into its lower-case words: "showSnapshotFiles"
// is show, snapshot, files.
func camelWords(name string) []string {
	var words []string
	start := 0
	for i, c := range name {
		if i > 0 && unicode.IsUpper(c) {
			words = append(words, strings.ToLower(name[start:i]))
			start = i
		}
	}
	return append(words, strings.ToLower(name[start:]))
}

// singular is a word as a file name compares it: "boxes" and "box" alike,
// "snapshots" and "snapshot" alike.
func singular(w string) string {
	switch {
	case strings.HasSuffix(w, "xes"):
		return strings.TrimSuffix(w, "es")
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		return strings.TrimSuffix(w, "s")
	}
	return w
}

// nameKey is words as the rule compares them: each singular, run together,
// so "snapshot_files" (a file) and snapshot, files (a handler) agree, and
// "signin" and sign, in.
func nameKey(words []string) string {
	var b strings.Builder
	for _, w := range words {
		b.WriteString(singular(w))
	}
	return b.String()
}

// namedFor reports whether file is named for handler, as app/web/doc.go
// and app/api/doc.go state the rule: the handler's words, thing first and
// its verb last (resetBox in box_reset.go, snapshotDiff in snapshot_diff.go),
// a page's "show", a dialog's "Dialog" and a "From" left out
// (showSnapshotFiles in snapshot_files.go, restoreFromTrash in
// trash_restore.go).
func namedFor(file, handler string) bool {
	var words []string
	for i, w := range camelWords(handler) {
		switch {
		case i == 0 && w == "show", w == "dialog", w == "from":
			continue
		}
		words = append(words, w)
	}
	key := nameKey(strings.Split(file, "_"))
	if key == nameKey(words) {
		return true
	}
	turned := append(append([]string{}, words[1:]...), words[0])
	return key == nameKey(turned)
}

// isDialog reports whether a GET handler shows what a POST on its path will
// do (the web's showResetDialog, the API's checkFork): it lives beside that
// POST's handler.
func isDialog(handler string) bool {
	return strings.HasSuffix(handler, "Dialog") || strings.HasPrefix(handler, "check")
}

// TestHandlersLiveInFilesNamedForThem: every handler the web's and the API's
// route tables name lives in the file named for it, thing first and verb
// last (resetBox in box_reset.go), and the GET that shows a dialog or checks
// an action lives beside the action's POST; a route the web and the API both
// have is handled by a function of one name in a file of one name.
func TestHandlersLiveInFilesNamedForThem(t *testing.T) {
	t.Parallel()
	files := map[string]string{} // handler name -> file, across both surfaces
	for _, dir := range []string{"app/web", "app/api"} {
		routes := routeTable(t, dir)
		if len(routes) < 40 {
			t.Fatalf("%s: read %d routes; its route table has more", dir, len(routes))
		}
		where := methodFiles(t, dir)
		posts := map[string]string{}
		for _, rt := range routes {
			if rt.method == "POST" {
				posts[rt.path] = rt.handler
			}
		}
		var bad []string
		for _, rt := range routes {
			file, ok := where[rt.handler]
			if !ok {
				t.Errorf("%s: %s %s: no method %s", dir, rt.method, rt.path, rt.handler)
				continue
			}
			if post, ok := posts[rt.path]; ok && rt.method == "GET" && isDialog(rt.handler) {
				if file != where[post] {
					bad = append(bad, rt.method+" "+rt.path+": "+rt.handler+" is in "+file+".go, not beside "+post+" in "+where[post]+".go")
				}
				continue
			}
			if !namedFor(file, rt.handler) {
				bad = append(bad, rt.method+" "+rt.path+": "+rt.handler+" is in "+file+".go, a file not named for it")
			}
			if other, ok := files[rt.handler]; ok && other != file {
				bad = append(bad, rt.method+" "+rt.path+": "+rt.handler+" is in "+file+".go here and in "+other+".go on the other surface")
			}
			files[rt.handler] = file
		}
		sort.Strings(bad)
		for _, b := range bad {
			t.Errorf("%s: %s", dir, b)
		}
	}
}
