package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// layoutRoots are the folders whose every package README.md's Layout
// names.
var layoutRoots = []string{"app", "jobs", "providers", "internal", "tools", "bench", "e2e"}

// layoutWord is a word of a Layout line that may name a path.
var layoutWord = regexp.MustCompile(`[\w./-]+`)

// layoutNames are the paths README.md's Layout names: each word of its
// block as written (app/snapshots/take, jobs/), and, on a line that opens
// with a folder (providers/, bench/), each word of it under that folder
// (local/ as providers/local, docker/dockertest as
// providers/docker/dockertest). Each is without its closing slash.
func layoutNames(t *testing.T, readme string) map[string]bool {
	t.Helper()
	_, after, ok := strings.Cut(readme, "\n## Layout\n")
	if !ok {
		t.Fatal("README.md has no section ## Layout")
	}
	_, block, ok := strings.Cut(after, "```\n")
	if !ok {
		t.Fatal("README.md's Layout has no block of paths")
	}
	block, _, _ = strings.Cut(block, "```")
	names := map[string]bool{}
	for _, line := range strings.Split(block, "\n") {
		words := layoutWord.FindAllString(line, -1)
		if len(words) == 0 {
			continue
		}
		folder := ""
		if strings.HasSuffix(words[0], "/") {
			folder = words[0]
		}
		for _, w := range words {
			w = strings.TrimRight(w, "./")
			if w == "" {
				continue
			}
			names[w] = true
			if folder != "" {
				names[folder+w] = true
			}
		}
	}
	return names
}

// goPackages are the folders under roots holding a Go file that is not a
// test.
func goPackages(t *testing.T, roots []string) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
				seen[filepath.ToSlash(filepath.Dir(path))] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// TestLayoutNamesEveryPackage: README.md's Layout names every package
// under app/, jobs/, providers/, internal/, tools/, bench/ and e2e/, so a
// reader finds where each thing lives and a new package is not left out.
func TestLayoutNamesEveryPackage(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	names := layoutNames(t, string(b))
	pkgs := goPackages(t, layoutRoots)
	if len(pkgs) < 50 {
		t.Fatalf("found %d packages; the repository has more", len(pkgs))
	}
	for _, p := range pkgs {
		if !names[p] {
			t.Errorf("README.md's Layout does not name the package %s: add a line or a clause saying what it holds", p)
		}
	}
}

// TestLayoutNames: the rule that reads Layout's lines.
func TestLayoutNames(t *testing.T) {
	t.Parallel()
	readme := "# x\n\n## Layout\n\n```\napp/store          migrations; app/store/db the queries\nproviders/         the interface; local/, docker/ (and docker/dockertest), qemu/\n```\n\nproviders/late\n"
	names := layoutNames(t, readme)
	for _, want := range []string{"app/store", "app/store/db", "providers", "providers/local", "providers/docker", "providers/docker/dockertest", "providers/qemu"} {
		if !names[want] {
			t.Errorf("%s is not read as named", want)
		}
	}
	for _, not := range []string{"providers/late", "app/store/local", "app/local"} {
		if names[not] {
			t.Errorf("%s is read as named; it is not", not)
		}
	}
}
