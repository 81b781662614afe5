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

// wordsOfWordsGo answers the pieces of sentence the words.go files write
// (the kernel's, each seam's in its package below, app/pictures', and the
// pages' in app/web and app/web/pagemodel: surfaceHomes): each string
// literal's runs between fmt's verbs, of 20 characters or more with at
// least three words, the length past which a run is a sentence's and not
// a common phrase. A piece that two of them write fails: each is said once.
func wordsOfWordsGo(t *testing.T) []string {
	t.Helper()
	homes, err := filepath.Glob(filepath.Join("*", "words.go"))
	if err != nil {
		t.Fatal(err)
	}
	// The pictures' words live with their taker, in app/pictures; words
	// only the pages say live with them.
	homes = append(homes, filepath.Join("..", "pictures", "words.go"))
	homes = append(homes, surfaceHomes...)
	seen := map[string]string{}
	var out []string
	for _, home := range append([]string{"words.go"}, homes...) {
		file, err := parser.ParseFile(token.NewFileSet(), home, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
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
				if len(run) < 20 || len(strings.Fields(run)) < 3 {
					continue
				}
				if at, ok := seen[run]; ok && at != home && !apart[run] {
					t.Errorf("%s and %s both write %q: say it in one of them", at, home, run)
				}
				if _, ok := seen[run]; !ok {
					seen[run] = home
					out = append(out, run)
				}
			}
			return true
		})
	}
	return out
}

// surfaceHomes are the words.go files of the surfaces: words only the pages
// say live there, and are held once as the kernel's are.
var surfaceHomes = []string{filepath.Join("..", "web", "words.go"), filepath.Join("..", "web", "pagemodel", "words.go")}

// TestWordsWrittenOnce: no piece of a sentence a words.go writes (the
// kernel's or a seam's) is written again in another words.go, the pages
// (app/web, views), the API (app/api) or the CLI (app/cli): they say it
// through that words.go, so it cannot drift apart. A piece written again
// fails here with where.
func TestWordsWrittenOnce(t *testing.T) {
	t.Parallel()
	pieces := wordsOfWordsGo(t)
	if len(pieces) < 200 {
		t.Fatalf("words.go gives only %d pieces of sentences: is it read?", len(pieces))
	}
	for _, dir := range []string{"../web", "../api", "../cli", "../../views"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasSuffix(path, "_test.go") ||
				!strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, ".html") {
				return err
			}
			for _, home := range surfaceHomes {
				if filepath.Clean(path) == filepath.Clean(home) {
					return nil
				}
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
