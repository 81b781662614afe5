package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// namedPath is a path of this repository a doc.go names: app/..., jobs/...,
// providers/..., and the like, up to the first character that ends it.
var namedPath = regexp.MustCompile(`(?:^|[\s(,"])((?:app|providers|jobs|views|static|e2e|sql|bench|scripts)(?:/[\w.-]*\w)+)`)

// backendCheck is a backend's compile-time check that it is a
// providers.Backend.
var backendCheck = regexp.MustCompile(`\b_\s+providers\.Backend\s*=`)

// docFiles are the repository's doc.go files, by their package's folder.
func docFiles(t *testing.T) map[string]string {
	t.Helper()
	docs := map[string]string{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.Name() == "doc.go" {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			docs[filepath.ToSlash(filepath.Dir(path))] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// TestDocsNameWhatExists: every package path or file of this repository a
// doc.go names exists, and providers/doc.go names every backend (each
// package under providers with the compile-time check that it is a
// providers.Backend).
func TestDocsNameWhatExists(t *testing.T) {
	t.Parallel()
	docs := docFiles(t)
	if len(docs) < 20 {
		t.Fatalf("found %d doc.go files; the repository has more", len(docs))
	}
	named := 0
	for dir, doc := range docs {
		for _, m := range namedPath.FindAllStringSubmatch(doc, -1) {
			named++
			p := strings.TrimSuffix(m[1], ".")
			if _, err := os.Stat(filepath.FromSlash(p)); err != nil {
				t.Errorf("%s/doc.go names %s, which does not exist", dir, p)
			}
		}
	}
	if named < 20 {
		t.Errorf("the doc.go files name %d paths; they name more", named)
	}
	backends, err := filepath.Glob("providers/*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range backends {
		pkg := filepath.ToSlash(filepath.Dir(f))
		if seen[pkg] || strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !backendCheck.Match(b) {
			continue
		}
		seen[pkg] = true
		if !namedPath.MatchString(pkg) || !strings.Contains(docs["providers"], pkg) {
			t.Errorf("providers/doc.go does not name the backend %s", pkg)
		}
	}
	if len(seen) < 2 {
		t.Errorf("found %d backends under providers; the repository has more", len(seen))
	}
}
