package api_test

import (
	"archive/tar"
	"compress/gzip"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
)

// snapshotDownload GETs a snapshot's download and reads its body whole: the status,
// the body, and the error reading it (a stream cut short).
func (e *env) snapshotDownload(t *testing.T, box, snapshot, path string) (int, []byte, error) {
	t.Helper()
	u := e.srv.URL + "/api/v1/boxes/" + box + "/snapshots/" + snapshot + "/download"
	if path != "" {
		u += "?path=" + path
	}
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.owner)
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// readTarGz reads a tar.gz whole, answering the first error.
func readTarGz(body []byte) error {
	zr, err := gzip.NewReader(strings.NewReader(string(body)))
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		if _, err := tr.Next(); err == io.EOF {
			break
		} else if err != nil {
			return err
		}
		if _, err := io.Copy(io.Discard, tr); err != nil {
			return err
		}
	}
	_, err = io.Copy(io.Discard, zr)
	return err
}

// TestDownloadOfUnreadableSnapshotFails: a snapshot whose content is gone or
// cut short on disk is refused before a byte, 409 in words; one whose
// content is damaged where only its read finds it (the same size, another
// hash) ends its stream as an error, never as a whole download.
func TestDownloadOfUnreadableSnapshotFails(t *testing.T) {
	t.Parallel()
	e := setup(t)
	content := func(data string) string {
		sum := sha256.Sum256([]byte(data))
		h := hex.EncodeToString(sum[:])
		return filepath.Join(e.Local.Root(), "content", h[:2], h[2:])
	}
	// One box per way of damage, each with its own content.
	snap := func(box, data string) {
		t.Helper()
		b := e.Box(t, ownerCaller(), box)
		dir := e.Local.BoxDir(providers.Guest{Ref: b.GuestRef})
		if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		e.call(t, "POST", "/boxes/"+box+"/snapshots?wait=true", e.owner, map[string]any{"name": "first"}).must(t, 200)
		if st, body, err := e.snapshotDownload(t, box, "first", ""); st != 200 || err != nil || readTarGz(body) != nil {
			t.Fatalf("%s's whole download: %d, %v, %v", box, st, err, readTarGz(body))
		}
	}
	refused := func(box, path string, want ...string) {
		t.Helper()
		st, body, err := e.snapshotDownload(t, box, "first", path)
		if err != nil || st != http.StatusConflict {
			t.Fatalf("download of %s %q: %d %v %s, want 409", box, path, st, err, body)
		}
		var ans struct {
			Error struct{ Message string } `json:"error"`
		}
		if err := json.Unmarshal(body, &ans); err != nil {
			t.Fatalf("a refused download answered %s: %v", body, err)
		}
		contains(t, ans.Error.Message, append([]string{"‘first’ cannot be read: "}, want...)...)
	}

	// Cut short on disk: refused before a byte, the folder and the file.
	cut := strings.Repeat("amber-fox's notes. ", 2000)
	snap("amber-fox", cut)
	if err := os.Truncate(content(cut), 100); err != nil {
		t.Fatal(err)
	}
	refused("amber-fox", "", "the content of notes.txt is cut short or damaged on disk")
	refused("amber-fox", "notes.txt", "the content of notes.txt is cut short or damaged on disk")

	// Gone from disk: the same.
	gone := strings.Repeat("brisk-lake's notes. ", 2000)
	snap("brisk-lake", gone)
	if err := os.Remove(content(gone)); err != nil {
		t.Fatal(err)
	}
	refused("brisk-lake", "", "the content of notes.txt is missing on disk")

	// Damaged in place, the same size: the stream begins, and its read
	// fails, for the folder (no end to its chunks, no gzip trailer) and the
	// file (short of its last byte); after that the snapshot is known
	// damaged, and refused before a byte.
	// Random, so it does not compress: the answer's first bytes are sent
	// before the read reaches the end of the file and finds it damaged.
	bad := noise(t, 1<<20)
	snap("calm-glade", bad)
	spoil(t, content(bad))
	st, body, err := e.snapshotDownload(t, "calm-glade", "first", "")
	if st != 200 {
		t.Fatalf("a folder damaged where only its read finds it answered %d %s, want a stream begun", st, body)
	}
	if err == nil && readTarGz(body) == nil {
		t.Fatalf("a damaged folder's download ended whole (%d bytes)", len(body))
	}
	t.Logf("the damaged folder's download: %d bytes, then %v", len(body), err)
	refused("calm-glade", "", "damaged on disk")
	refused("calm-glade", "notes.txt", "damaged on disk")
}

// TestDownloadOfDamagedFileEndsAsError: a file download whose content the
// backend finds damaged only at its end never reaches the client whole.
func TestDownloadOfDamagedFileEndsAsError(t *testing.T) {
	t.Parallel()
	e := setup(t)
	b := e.Box(t, ownerCaller(), "amber-fox")
	data := noise(t, 1<<20)
	dir := e.Local.BoxDir(providers.Guest{Ref: b.GuestRef})
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	e.call(t, "POST", "/boxes/amber-fox/snapshots?wait=true", e.owner, map[string]any{"name": "first"}).must(t, 200)
	sum := sha256.Sum256([]byte(data))
	h := hex.EncodeToString(sum[:])
	spoil(t, filepath.Join(e.Local.Root(), "content", h[:2], h[2:]))
	st, body, err := e.snapshotDownload(t, "amber-fox", "first", "notes.txt")
	if st != 200 || err == nil || len(body) >= len(data) {
		t.Fatalf("a damaged file's download: %d, %d of %d bytes, read error %v; want a read error short of its end", st, len(body), len(data), err)
	}
}

// noise is n random bytes, as a string.
func noise(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// spoil changes a content file's last byte in place: the same size, another
// hash, found only by a read to its end.
func spoil(t *testing.T, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-1] ^= 0xff
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
