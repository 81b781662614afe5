package api_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
)

// TestLookInsideAPI drives browsing, downloading and comparing through the
// REST routes and box_snapshot_diff with an agent's token, and box_restore's
// dry_run, which changes nothing.
func TestLookInsideAPI(t *testing.T) {
	t.Parallel()
	e := setup(t)
	tok, _ := e.agent(t, "Look inside")
	bx := e.call(t, "POST", "/boxes", tok, map[string]any{"name": "lit-box", "template": "blank"}).must(t, 201)
	dir := e.Local.BoxDir(providers.Guest{Ref: bx.str("guestRef")})
	write := func(p, s string) {
		t.Helper()
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("notes.txt", "one\ntwo\n")
	write("src/app.go", "package app\n")
	e.call(t, "POST", "/tools/box_snapshot", tok, map[string]any{"box": "lit-box", "name": "before"}).must(t, 200)

	files := e.call(t, "GET", "/boxes/lit-box/snapshots/before/files", tok, nil).must(t, 200)
	entries := files.JSON["entries"].([]any)
	if len(entries) != 2 || entries[0].(map[string]any)["path"] != "src" || entries[1].(map[string]any)["path"] != "notes.txt" {
		t.Fatalf("files: %s", files.Raw)
	}
	f := e.call(t, "GET", "/boxes/lit-box/snapshots/before/file?path=notes.txt", tok, nil).must(t, 200)
	if f.str("text") != "one\ntwo\n" {
		t.Fatalf("file: %s", f.Raw)
	}
	bad := e.call(t, "GET", "/boxes/lit-box/snapshots/before/download?path=../../etc/passwd", tok, nil).must(t, 400)
	contains(t, bad.errorWords(), `The path "../../etc/passwd" climbs out of the snapshot with ..`)

	d := e.call(t, "GET", "/boxes/lit-box/snapshots/before/download?path=notes.txt", tok, nil).must(t, 200)
	if string(d.Raw) != "one\ntwo\n" {
		t.Fatalf("downloaded %q", d.Raw)
	}
	d = e.call(t, "GET", "/boxes/lit-box/snapshots/before/download?path=src", tok, nil).must(t, 200)
	zr, err := gzip.NewReader(bytes.NewReader(d.Raw))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
	if strings.Join(names, " ") != "src/ src/app.go" {
		t.Fatalf("the folder's tar.gz holds %v", names)
	}
	log := e.call(t, "GET", "/boxes/lit-box/log", tok, nil).must(t, 200)
	contains(t, string(log.Raw), "/src as a tar.gz of ‘before’")

	write("notes.txt", "one\nTWO\n")
	write("added.txt", "new\n")
	diff := e.call(t, "POST", "/tools/box_snapshot_diff", tok, map[string]any{"box": "lit-box", "snapshot": "before", "limit": 1}).must(t, 200)
	if diff.str("message") != "1 file changed, 1 added, 0 removed since then. Listing 1 to 1 of 2." || diff.JSON["next"] != float64(1) {
		t.Fatalf("box_snapshot_diff: %s", diff.Raw)
	}
	fd := e.call(t, "GET", "/boxes/lit-box/snapshots/before/diff?path=notes.txt", tok, nil).must(t, 200)
	if fd.str("diff") != "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n" {
		t.Fatalf("a file's diff: %s", fd.Raw)
	}

	dry := e.call(t, "POST", "/tools/box_restore", tok, map[string]any{"box": "lit-box", "snapshot": "before", "dry_run": true}).must(t, 200)
	contains(t, dry.str("message"), "1 file changed, 1 added, 0 removed since then. The undo takes up to ", "Nothing changed: this was a dry run.")
	if got, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(got) != "one\nTWO\n" {
		t.Fatalf("a dry run changed notes.txt to %q", got)
	}
	lin := e.call(t, "GET", "/boxes/lit-box/lineage", tok, nil).must(t, 200)
	if h, _ := lin.JSON["head"].(map[string]any); h == nil || h["name"] != "before" {
		t.Fatalf("lineage: %s", lin.Raw)
	}
}
