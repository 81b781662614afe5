package docker_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/api"
)

// TestDockerBrowseThroughAPI looks inside a Docker box's snapshot through
// the REST routes the local backend's snapshots answer on: a folder's
// listing, a file, a folder's download as a tar.gz, a file compared with
// the box now, and box_restore's dry run, which says what would change.
func TestDockerBrowseThroughAPI(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	env, _, _ := coreEnv(t, b, true, install)
	box := dockerBox(t, env, b, "amber-look")
	g := guestOf(box)
	must(t, b.Start(context.Background(), g))
	putTar(t, b, g, "/", put{name: "data/", kind: tar.TypeDir}, put{name: "data/notes.txt", content: "one\ntwo\n"},
		put{name: "data/link", kind: tar.TypeSymlink, target: "/etc/passwd"})
	sn := takeDone(t, env, env.Core, env.Take, box.Name, "before")

	r := chi.NewRouter()
	r.Mount("/api/v1", api.New(env.APIOptions()))
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	_, token, err := env.Auth.CreateAPIToken(context.Background(), "cli")
	must(t, err)
	get := func(path string, want int) []byte {
		t.Helper()
		req, err := http.NewRequest("GET", srv.URL+"/api/v1/boxes/amber-look/snapshots/before"+path, nil)
		must(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := srv.Client().Do(req)
		must(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		must(t, err)
		if resp.StatusCode != want {
			t.Fatalf("GET %s: %d %s, want %d", path, resp.StatusCode, raw, want)
		}
		return raw
	}

	var files struct {
		Entries []struct{ Path, Type, Target string }
	}
	must(t, json.Unmarshal(get("/files?path=data", 200), &files))
	if len(files.Entries) != 2 || files.Entries[0].Path != "data/link" || files.Entries[0].Target != "/etc/passwd" || files.Entries[1].Path != "data/notes.txt" {
		t.Fatalf("files: %+v", files)
	}
	var file struct{ Text string }
	must(t, json.Unmarshal(get("/file?path=data/notes.txt", 200), &file))
	if file.Text != "one\ntwo\n" {
		t.Fatalf("file: %+v", file)
	}
	var link struct {
		Text  string
		Entry struct{ Type, Target string }
	}
	must(t, json.Unmarshal(get("/file?path=data/link", 200), &link))
	if link.Text != "" || link.Entry.Type != "link" || link.Entry.Target != "/etc/passwd" {
		t.Fatalf("a link is answered as %+v, not reported as a link and never followed", link)
	}
	get("/download?path=../../etc/passwd", 400)

	zr, err := gzip.NewReader(bytes.NewReader(get("/download?path=data", 200)))
	must(t, err)
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		must(t, err)
		names = append(names, h.Name)
	}
	if strings.Join(names, " ") != "data/ data/link data/notes.txt" {
		t.Fatalf("the folder's tar.gz holds %v", names)
	}

	putTar(t, b, g, "/", put{name: "data/notes.txt", content: "one\nTWO\n"})
	var diff struct{ Diff string }
	must(t, json.Unmarshal(get("/diff?path=data/notes.txt", 200), &diff))
	if diff.Diff != "--- a/data/notes.txt\n+++ b/data/notes.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n" {
		t.Fatalf("a file's diff with now: %+v", diff)
	}
	// The restore's preview: a dry run says what the restore would change.
	req, err := http.NewRequest("POST", srv.URL+"/api/v1/tools/box_restore", strings.NewReader(`{"box":"amber-look","snapshot":"before","dry_run":true}`))
	must(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	must(t, err)
	raw, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	var dry struct{ Message string }
	must(t, json.Unmarshal(raw, &dry))
	if resp.StatusCode != 200 || !strings.Contains(dry.Message, "1 file changed, 0 added, 0 removed since then. ") || !strings.HasSuffix(dry.Message, "Nothing changed: this was a dry run.") {
		t.Fatalf("box_restore's dry run: %d %s", resp.StatusCode, raw)
	}
	noLooks(t, b, sn.Ref)
}
