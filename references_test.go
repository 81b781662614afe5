package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// outsideReference is the shape of a pointer into a document the
// repository does not hold: a section, unit, issue or gate number, a gate's
// name (G1 to G99, also in a test's name) or a section sign. A reader of the
// code has none of those documents, so a comment says the rule or its why
// in a sentence instead.
var outsideReference = regexp.MustCompile(`(?i:\bsections? \d+|\bunit \d+|\bissue \d+|\bgates? G?\d+)|\bG\d{1,2}\b|\bTestG\d+|§`)

// gateFile is a test file named by a gate's number instead of what it proves.
var gateFile = regexp.MustCompile(`^g\d+_test\.go$`)

// generated is the first line Go's convention puts on generated code
// (sqlc's app/store/db): its comments come from sql/queries, scanned there.
var generated = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

// commentText is a line with its leading comment marker taken off, so a
// reference wrapped across two comment lines reads as one.
func commentText(line string) string {
	s := strings.TrimSpace(line)
	for _, mark := range []string{"//", "--", "#"} {
		if strings.HasPrefix(s, mark) {
			return strings.TrimSpace(strings.TrimPrefix(s, mark))
		}
	}
	return s
}

// references answers each line of text that holds a reference to a
// document outside the repository, also one wrapped onto the next line, as
// "line: text".
func references(text string) []string {
	var found []string
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		if outsideReference.MatchString(line) {
			found = append(found, lineRef(i, line))
			continue
		}
		if i+1 == len(lines) {
			continue
		}
		tail := strings.TrimRight(line, " \t")
		tail = tail[max(0, len(tail)-20):]
		head := commentText(lines[i+1])
		head = head[:min(20, len(head))]
		for _, m := range outsideReference.FindAllStringIndex(tail+" "+head, -1) {
			if m[0] < len(tail) && m[1] > len(tail) {
				found = append(found, lineRef(i, line+" / "+head))
				break
			}
		}
	}
	return found
}

// lineRef is "line: text" for the line at index i.
func lineRef(i int, line string) string {
	return strconv.Itoa(i+1) + ": " + strings.TrimSpace(line)
}

// scannedFiles are the repository's hand-written .go files, its .sql files
// and README.md, by their slash path.
func scannedFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		p := filepath.ToSlash(path)
		if p == "references_test.go" {
			return nil // this file spells out the shapes it looks for
		}
		if strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".sql") || p == "README.md" {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestNoReferencesOutsideTheRepository: no hand-written Go file, SQL file or
// the README points at a section, unit, issue or gate of a document the
// repository does not hold, and no test file is named by a gate's number;
// each is named by file and line.
func TestNoReferencesOutsideTheRepository(t *testing.T) {
	t.Parallel()
	files := scannedFiles(t)
	if len(files) < 100 {
		t.Fatalf("found %d files to scan; the repository has more", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.FromSlash(f))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if strings.HasSuffix(f, ".go") && generated.MatchString(text) {
			continue
		}
		found := references(text)
		if gateFile.MatchString(filepath.Base(f)) {
			found = append(found, "0: the file is named by a gate's number, not by what it proves")
		}
		if len(found) == 0 {
			continue
		}
		for _, r := range found {
			t.Errorf("%s:%s (say the rule or its why in a sentence instead)", f, r)
		}
	}
}

// TestReferencesFound: the scan finds each shape of reference, also wrapped
// across two comment lines, and passes the words that only look alike.
func TestReferencesFound(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"// as section 5 says",
		"// (sections 7 and 8)",
		"// refused (G12).",
		"// decided during unit 3",
		"-- (issue 10, Benchmarks)",
		"// the gate G7 words",
		"// § 4",
		"func TestG6RestartRecovery(t *testing.T) {",
		"// the capture order (section\n// 5, step 4)",
		"-- tab (issue\n-- 10): its search",
	} {
		if len(references(text)) == 0 {
			t.Errorf("%q: no reference found", text)
		}
	}
	for _, text := range []string{
		"g2, err := e.b.Acquire(ctx, spec)",
		"// 4 GiB of memory, 12 GB on disk",
		"// the section on restores",
		"// a unit of work",
	} {
		if got := references(text); len(got) != 0 {
			t.Errorf("%q: found %q, which is no reference", text, got)
		}
	}
}
