package api_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// download GETs path with token and answers the status and the body.
func (e *env) download(t testing.TB, path, token string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", e.srv.URL+"/api/v1"+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// upload POSTs files to /import as multipart/form-data.
func (e *env) upload(t testing.TB, token string, files ...[]byte) answer {
	t.Helper()
	return e.uploadTo(t, "/import", token, files...)
}

// uploadTo posts export files to path (/import with its query).
func (e *env) uploadTo(t testing.TB, path, token string, files ...[]byte) answer {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for i, f := range files {
		w, _ := mw.CreateFormFile("file", "part"+string(rune('1'+i))+".boxsnap")
		w.Write(f)
	}
	mw.Close()
	req, _ := http.NewRequest("POST", e.srv.URL+"/api/v1"+path, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{Status: resp.StatusCode, Raw: raw}
	_ = jsonUnmarshal(raw, &a.JSON)
	return a
}

func (e *env) boxFile(t testing.TB, box, name string) string {
	t.Helper()
	b, err := e.Core.Box(t.Context(), snapshots.Owner(), box)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(e.Local.BoxDir(providers.Guest{Ref: b.GuestRef}), name))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func writeBox(t testing.TB, e *env, b *snapshots.Box, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(e.Local.BoxDir(providers.Guest{Ref: b.GuestRef}), name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// heldSnapshots counts the snapshots in an install's local store.
func heldSnapshots(t testing.TB, e *env) int {
	t.Helper()
	held, err := e.Local.HeldSnapshots(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return len(held)
}

// TestExportImportRoundTrip moves a box's history between two installs (two
// databases, two local folders) through the API: a full export and an
// incremental one, imported in one batch out of order; each snapshot keeps
// its ID and its ancestry; a damaged or cut-short file, or an incremental
// one without its base, is refused naming what is wrong, with nothing
// imported; importing again changes nothing; a name the box uses gets
// " (2)"; an agent may neither export nor import.
func TestExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	a, b := setup(t), setup(t)
	if a.Install == b.Install {
		t.Fatal("the two installs share an ID")
	}
	box := a.Box(t, snapshots.Owner(), "amber-fox")
	big := make([]byte, 1<<20)
	rand.Read(big)
	writeBox(t, a, box, "big.bin", big)
	writeBox(t, a, box, "notes.txt", []byte("one"))
	take := func(name string) string {
		t.Helper()
		ans := a.call(t, "POST", "/boxes/amber-fox/snapshots?wait=true", a.owner, map[string]any{"name": name}).must(t, 200)
		return ans.JSON["operation"].(map[string]any)["target"].(string)
	}
	first := take("first")
	writeBox(t, a, box, "notes.txt", []byte("two"))
	second := take("second")
	writeBox(t, a, box, "notes.txt", []byte("three"))
	third := take("third")

	status, full := a.download(t, "/boxes/amber-fox/export?snapshot=first", a.owner)
	if status != 200 {
		t.Fatalf("export: %d %s", status, full)
	}
	status, incr := a.download(t, "/boxes/amber-fox/export?snapshot=third&snapshot=second&base=first", a.owner)
	if status != 200 {
		t.Fatalf("incremental export: %d %s", status, incr)
	}
	if len(full) < 1<<20 || len(incr) > 256<<10 {
		t.Fatalf("the full file is %d bytes, the incremental one %d: it should leave out the 1 MiB its base holds", len(full), len(incr))
	}

	// An agent may neither export nor import.
	agentToken, _ := a.agent(t, "Try to take it out")
	if st, raw := a.download(t, "/boxes/amber-fox/export?snapshot=first", agentToken); st != 403 && st != 404 {
		t.Fatalf("an agent exported: %d %s", st, raw)
	}
	bAgent, _ := b.agent(t, "Try to bring it in")
	if ans := b.upload(t, bAgent, full); ans.Status != 403 || !strings.Contains(ans.errorWords(), "Only the person can import snapshots") {
		t.Fatalf("an agent imported: %d %s", ans.Status, ans.Raw)
	}

	nothing := func(why string) {
		t.Helper()
		if n := heldSnapshots(t, b); n != 0 {
			t.Fatalf("after %s, install B holds %d snapshots", why, n)
		}
		b.call(t, "GET", "/boxes/amber-fox", b.owner, nil).must(t, 404)
	}
	// A damaged file: one byte changed inside the snapshot's archive.
	damaged := bytes.Clone(full)
	damaged[len(damaged)/2] ^= 0xff
	ans := b.upload(t, b.owner, damaged)
	if ans.Status != 400 || !strings.Contains(ans.errorWords(), "does not match its checksum") || !strings.Contains(ans.errorWords(), "Nothing was imported.") {
		t.Fatalf("a damaged file: %d %s", ans.Status, ans.Raw)
	}
	nothing("a damaged file")
	// A file cut short, in a batch with a good one: nothing of either.
	ans = b.upload(t, b.owner, incr, full[:len(full)-2000])
	if ans.Status != 400 || !strings.Contains(ans.errorWords(), "part2.boxsnap") || !strings.Contains(ans.errorWords(), "Nothing was imported.") {
		t.Fatalf("a file cut short: %d %s", ans.Status, ans.Raw)
	}
	nothing("a file cut short")
	// The incremental file alone lacks its base's content.
	ans = b.upload(t, b.owner, incr)
	if ans.Status != 400 || !strings.Contains(ans.errorWords(), "neither the batch nor this store holds") {
		t.Fatalf("an incremental file without its base: %d %s", ans.Status, ans.Raw)
	}
	nothing("an incremental file without its base")

	// The batch out of order: the incremental file first.
	ans = b.upload(t, b.owner, incr, full).must(t, 200)
	if ans.JSON["made"] != true || ans.str("boxName") != "amber-fox" {
		t.Fatalf("import: %s", ans.Raw)
	}
	parents := map[string]string{}
	for _, x := range ans.JSON["snapshots"].([]any) {
		s := x.(map[string]any)
		p, _ := s["parent"].(string)
		parents[s["id"].(string)] = p
	}
	if len(parents) != 3 || parents[second] != first || parents[third] != second {
		t.Fatalf("ancestry after the import: %v (first %s, second %s, third %s)", parents, first, second, third)
	}
	for id, name := range map[string]string{first: "first", second: "second", third: "third"} {
		got := b.call(t, "GET", "/boxes/amber-fox/snapshots/"+id, b.owner, nil).must(t, 200)
		if got.str("name") != name || got.str("state") != "ready" {
			t.Fatalf("imported %s: %s", id, got.Raw)
		}
	}
	for id, parent := range map[string]string{second: first, third: second} {
		sn, _, err := b.Core.Snapshot(t.Context(), snapshots.Owner(), id)
		if err != nil || sn.ParentID == nil || *sn.ParentID != parent {
			t.Fatalf("B's record of %s has parent %v, want %s (%v)", id, sn.ParentID, parent, err)
		}
	}
	if bb, err := b.Core.Box(t.Context(), snapshots.Owner(), "amber-fox"); err != nil || bb.HeadID == nil || *bb.HeadID != third {
		t.Fatalf("the imported box's head is not the newest snapshot %s: %+v", third, bb)
	}
	if got := b.boxFile(t, "amber-fox", "notes.txt"); got != "three" {
		t.Fatalf("the imported box holds %q, not the newest snapshot's", got)
	}
	// It restores on B as on A.
	b.call(t, "POST", "/boxes/amber-fox/snapshots/first/restore?wait=true", b.owner, map[string]any{"replace": true}).must(t, 200)
	if got := b.boxFile(t, "amber-fox", "notes.txt"); got != "one" {
		t.Fatalf("after restoring ‘first’ on B the box holds %q", got)
	}
	if got := b.boxFile(t, "amber-fox", "big.bin"); got != string(big) {
		t.Fatal("after restoring ‘first’ on B its big file differs")
	}

	// Importing the same again changes nothing.
	held := heldSnapshots(t, b)
	ans = b.upload(t, b.owner, full).must(t, 200)
	if !strings.HasPrefix(ans.str("words"), "Nothing new") || ans.JSON["made"] != false || heldSnapshots(t, b) != held {
		t.Fatalf("importing again: %s", ans.Raw)
	}

	// A name the box uses on B gets " (2)".
	a.call(t, "PUT", "/boxes/amber-fox/snapshots/first/name", a.owner, map[string]any{"name": "oldest"}).must(t, 200)
	writeBox(t, a, box, "notes.txt", []byte("four"))
	fourth := take("first")
	status, more := a.download(t, "/boxes/amber-fox/export?snapshot=first&base=third", a.owner)
	if status != 200 {
		t.Fatalf("export: %d %s", status, more)
	}
	ans = b.upload(t, b.owner, more).must(t, 200)
	got := b.call(t, "GET", "/boxes/amber-fox/snapshots/"+fourth, b.owner, nil).must(t, 200)
	if got.str("name") != "first (2)" {
		t.Fatalf("the clashing name became %q: %s", got.str("name"), ans.Raw)
	}
}

func jsonUnmarshal(raw []byte, v any) error { return json.Unmarshal(raw, v) }

// TestImportAnswersItsOperation: an import is an operation of kind import;
// with wait=false the call answers it at once (202), its end says what it
// did in the import's words, and a repeat of its request ID is the same
// import.
func TestImportAnswersItsOperation(t *testing.T) {
	t.Parallel()
	a, b := setup(t), setup(t)
	box := a.Box(t, snapshots.Owner(), "amber-fox")
	writeBox(t, a, box, "notes.txt", []byte("one"))
	a.call(t, "POST", "/boxes/amber-fox/snapshots?wait=true", a.owner, map[string]any{"name": "first"}).must(t, 200)
	status, file := a.download(t, "/boxes/amber-fox/export?snapshot=first", a.owner)
	if status != 200 {
		t.Fatalf("export: %d %s", status, file)
	}

	ans := b.uploadTo(t, "/import?wait=false&request=move-1", b.owner, file)
	if ans.Status != 202 {
		t.Fatalf("import with wait=false: %d %s", ans.Status, ans.Raw)
	}
	op, _ := ans.JSON["operation"].(map[string]any)
	if op == nil || op["kind"] != "import" {
		t.Fatalf("the import answered no import operation: %s", ans.Raw)
	}
	id, _ := op["id"].(string)
	end := b.call(t, "GET", "/operations/"+id+"?wait=true", b.owner, nil).must(t, 200)
	if end.str("message") != "Imported 1 snapshot into amber-fox. amber-fox is a new box here, made from ‘first’." {
		t.Fatalf("the import's end says: %s", end.Raw)
	}
	again := b.uploadTo(t, "/import?request=move-1", b.owner, file)
	if again.Status != 200 || again.str("operation") != id || again.str("boxName") != "amber-fox" {
		t.Fatalf("a repeated request answered %d %s, want operation %s", again.Status, again.Raw, id)
	}
}
