package snapshots

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// wordsHomeArgs names the calls whose words a person or an agent reads,
// and which of their arguments (from 0) hold those words: the box log's
// event (Log's words), a refusal's words, and an operation's failure: its
// end (Finish's words and what boxsnap then observed), the helpers that end
// each kind that fails (a take, a restore, a reset, a fork, a held copy, a
// release and the trash), and a snapshot's new state's words.
var wordsHomeArgs = map[string][]int{"Log": {5}, "refusal": {1}, "Finish": {4, 5}, "end": {2},
	"failTake": {4}, "incompleteTake": {4}, "restoreFailed": {5, 6}, "resetFailed": {3, 4}, "undoReset": {6},
	"fail": {0}, "releaseStopped": {3}, "trashFailed": {3}, "untrashFailed": {3}, "MoveState": {4},
	"markUnavailable": {2}}

// TestWordsWrittenInWordsGo: outside words.go (this package's, and each
// seam package's under it), no call that says words to a person or an
// agent (wordsHomeArgs), and no Refusal's Words, writes a sentence of its
// own: a string literal or fmt's formatting in those arguments fails this
// test, so the words are written once, in words.go, and tested there (doc.go: "A rule never writes a sentence of its own").
func TestWordsWrittenInWordsGo(t *testing.T) {
	t.Parallel()
	// The kernel's files and each seam's, in its package below.
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	seams, err := filepath.Glob(filepath.Join("*", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, seams...)
	fset := token.NewFileSet()
	for _, f := range files {
		if filepath.Base(f) == "words.go" || strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		file, err := parser.ParseFile(fset, f, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		written := func(what string, e ast.Expr) {
			if lit := sentenceIn(e); lit != "" {
				t.Errorf("%s: %s writes its own words (%s): say them through a function of words.go", fset.Position(e.Pos()), what, lit)
			}
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				name := ""
				switch fn := n.Fun.(type) {
				case *ast.Ident:
					name = fn.Name
				case *ast.SelectorExpr:
					name = fn.Sel.Name
				}
				for _, i := range wordsHomeArgs[name] {
					if i < len(n.Args) {
						written(name, n.Args[i])
					}
				}
			case *ast.CompositeLit:
				if refusalType(n.Type) {
					for _, el := range n.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok {
							if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Words" {
								written("a Refusal", kv.Value)
							}
						}
					}
				}
			}
			return true
		})
	}
}

// refusalType says whether t names the Refusal type: Refusal in the
// kernel, snapshots.Refusal in a seam.
func refusalType(t ast.Expr) bool {
	switch t := t.(type) {
	case *ast.Ident:
		return t.Name == "Refusal"
	case *ast.SelectorExpr:
		return t.Sel.Name == "Refusal"
	}
	return false
}

// sentenceIn answers the first words e writes itself: a string literal
// other than "", or a call of fmt; "" where it writes none. What e passes
// to another function (a function of words.go, a time's Format) is that
// function's to say.
func sentenceIn(e ast.Expr) string {
	found := ""
	ast.Inspect(e, func(n ast.Node) bool {
		if found != "" {
			return false
		}
		switch n := n.(type) {
		case *ast.BasicLit:
			if n.Kind == token.STRING && n.Value != `""` {
				found = n.Value
			}
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "fmt" {
					found = "fmt." + sel.Sel.Name
				}
			}
			return false
		}
		return true
	})
	return found
}

// TestWordsNamedAlike: the words of every words.go (the kernel's, each
// seam's and the pages') are named in one style, what they say then "Words"
// (ExecutionMachineRefusalWords, SignInWords), never "words" first, so a
// reader finds them by one pattern.
func TestWordsNamedAlike(t *testing.T) {
	t.Parallel()
	homes, err := filepath.Glob(filepath.Join("*", "words.go"))
	if err != nil {
		t.Fatal(err)
	}
	prefixed := regexp.MustCompile(`^[wW]ords[A-Z]`)
	homes = append(homes, surfaceHomes...)
	for _, home := range append([]string{"words.go"}, homes...) {
		file, err := parser.ParseFile(token.NewFileSet(), home, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			var names []*ast.Ident
			switch d := d.(type) {
			case *ast.FuncDecl:
				names = append(names, d.Name)
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					if v, ok := sp.(*ast.ValueSpec); ok {
						names = append(names, v.Names...)
					}
				}
			}
			for _, n := range names {
				if prefixed.MatchString(n.Name) {
					what := n.Name[len("words"):]
					if !n.IsExported() {
						what = strings.ToLower(what[:1]) + what[1:]
					}
					t.Errorf("%s: %s is named words-first: name it %sWords", home, n.Name, what)
				}
			}
		}
	}
}
