package snapshots

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// fmtVerb splits a format string into the words between its verbs.
var fmtVerb = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z%]`)

// wordsOfWordsGo answers the pieces of sentence words.go writes, the
// kernel's and each seam package's under it (tab/words.go): each
// string literal's runs between fmt's verbs, of 20 characters or more
// with at least three words, the length past which a run is a sentence's
// and not a common phrase.
func wordsOfWordsGo(t *testing.T) []string {
	t.Helper()
	homes, err := filepath.Glob("*/words.go")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var out []string
	for _, home := range append([]string{"words.go"}, homes...) {
		out = append(out, piecesOf(t, home, seen)...)
	}
	return out
}

// piecesOf answers the pieces of sentence one words.go writes that seen
// does not hold yet, and adds them to it.
func piecesOf(t *testing.T, path string, seen map[string]bool) []string {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(file, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		for _, run := range fmtVerb.Split(s, -1) {
			run = strings.TrimSpace(run)
			if len(run) >= 20 && len(strings.Fields(run)) >= 3 && !seen[run] {
				seen[run] = true
				out = append(out, run)
			}
		}
		return true
	})
	return out
}

// TestWordsWrittenOnce: no piece of a sentence words.go writes is written
// again in the pages (app/web, views), the API (app/api), the CLI
// (app/cli) or a seam's package under the kernel (outside its words.go):
// they say it through a words.go, so it cannot drift apart. A piece
// written again fails here with where.
func TestWordsWrittenOnce(t *testing.T) {
	t.Parallel()
	pieces := wordsOfWordsGo(t)
	if len(pieces) < 200 {
		t.Fatalf("words.go gives only %d pieces of sentences: is it read?", len(pieces))
	}
	seams, err := filepath.Glob("*/doc.go")
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{"../web", "../api", "../cli", "../../views"}
	for _, doc := range seams {
		dirs = append(dirs, filepath.Dir(doc))
	}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasSuffix(path, "_test.go") || d.Name() == "words.go" ||
				!strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, ".html") {
				return err
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, w := range writtenIn(t, path, src) {
				for _, p := range pieces {
					if strings.Contains(w.text, p) && !apart[p] {
						t.Errorf("%s:%d writes %q again: say it through words.go", path, w.line, p)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// apart are pieces words.go writes that another sentence shares without
// being the same sentence, each for its reason.
var apart = map[string]bool{
	// The CLI's and the API's own refusals of an import end as the core's
	// do; their first sentences are their own (a local file, the upload).
	". Nothing was imported.": true,
	// ByWords' words, in the API's and the CLI's doc comments and the
	// listing's "by" of a CLI caller, which is ByWords' own.
	"by a boxsnap command": true,
	// The restore dialog's "goes back to 4 cores and 8 GiB memory, as it
	// was then." is a plan's sentence; the box log's restored event says
	// it after the fact.
	"memory, as it was then": true,
	// The toast's short word of an unconfirmed restore; its box's page
	// says UnknownWords whole, with Check now.
	"boxsnap could not confirm the": true,
	// "Only the person forks as one of their machines" (the API) and
	// "Only the person forks (box)" (the core) are two rules.
	"Only the person forks": true,
}

// written is one string a file writes and its line.
type written struct {
	text string
	line int
}

// writtenIn answers the strings a file writes: a Go file's string
// literals (its comments are not words anyone reads), or a template's
// whole text.
func writtenIn(t *testing.T, path string, src []byte) []written {
	t.Helper()
	if !strings.HasSuffix(path, ".go") {
		return []written{{string(src), 1}}
	}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []written
	ast.Inspect(file, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				out = append(out, written{s, fset.Position(lit.Pos()).Line})
			}
		}
		return true
	})
	return out
}
