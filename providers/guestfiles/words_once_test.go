package guestfiles

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// looks are the folders of the looks at a box's files that refuse in
// guestfiles' words: the local backend's, Docker's and QEMU's.
var looks = []string{"../local/browse", "../docker/boxfiles", "../qemu"}

// fmtVerb splits a format string into the words between its verbs.
var fmtVerb = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z%]`)

// TestWordsWrittenOnce: no piece of a refusal this package writes (each
// run of a string literal between fmt's verbs, of 12 characters or more
// with at least three words) is written again by a look at a box's files
// (looks): they refuse through this package, so the backends' words cannot
// drift apart. A piece written again fails here with where.
func TestWordsWrittenOnce(t *testing.T) {
	var pieces []string
	for _, lit := range literals(t, "guestfiles.go") {
		for _, run := range fmtVerb.Split(lit.text, -1) {
			run = strings.TrimSpace(run)
			if len(run) >= 12 && len(strings.Fields(run)) >= 3 && !slices.Contains(pieces, run) {
				pieces = append(pieces, run)
			}
		}
	}
	if len(pieces) < 8 {
		t.Fatalf("guestfiles.go gives only %d pieces of refusals: is it read? %q", len(pieces), pieces)
	}
	for _, dir := range looks {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("the look in %s has no Go files: %v", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			for _, lit := range literals(t, f) {
				for _, p := range pieces {
					if strings.Contains(lit.text, p) && !apart[filepath.ToSlash(f)+": "+p] {
						t.Errorf("%s:%d writes %q again: refuse through guestfiles", f, lit.line, p)
					}
				}
			}
		}
	}
}

// apart are pieces a look's file writes in a sentence of another rule
// than this package's, each for its reason.
var apart = map[string]bool{
	// A write into a Docker box makes the folders on its way: its refusal
	// of a link or a file on that way is the write's.
	"../docker/boxfiles/write.go: goes through a link":       true,
	"../docker/boxfiles/write.go: , which is never followed": true,
	"../docker/boxfiles/write.go: is not a folder":           true,
	// A read of the top folder itself, which names no path.
	"../docker/boxfiles/files.go: is not a file": true,
	// A QEMU template's disk image on the host, not a guest's file.
	"../qemu/templates.go: is not a file": true,
}

// literal is a string literal a Go file writes and its line.
type literal struct {
	text string
	line int
}

// literals answers the string literals of the Go file path (its comments
// are not words anyone reads).
func literals(t *testing.T, path string) []literal {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []literal
	ast.Inspect(file, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				out = append(out, literal{s, fset.Position(lit.Pos()).Line})
			}
		}
		return true
	})
	return out
}
