package local

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// Hostile archives and manifests: nothing inside a box or an archive
// reaches the host (issue 23).

// hostile is a box whose store and box folder lie in a test folder beside a
// folder "outside" that nothing may ever write in. From the box's folder,
// root/local/boxes/<box>, "../../../outside" is that folder.
type hostile struct {
	env
	outside string
}

const up = "../../../outside"

func setupHostile(t *testing.T) hostile {
	t.Helper()
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	e := setupAt(t, filepath.Join(base, "local"), "")
	if got, _ := filepath.Abs(filepath.Join(e.dir, filepath.FromSlash(up))); got != outside {
		t.Fatalf("%s from the box's folder is %s, not %s", up, got, outside)
	}
	return hostile{env: e, outside: outside}
}

// untouched fails the test when anything was written in the outside folder.
func (h hostile) untouched(t *testing.T) {
	t.Helper()
	left, _ := os.ReadDir(h.outside)
	for _, d := range left {
		t.Errorf("%s was written outside the box", filepath.Join(h.outside, d.Name()))
	}
}

// emptyStore fails the test when the store holds a snapshot, content or a
// temporary file.
func (h hostile) emptyStore(t *testing.T) {
	t.Helper()
	if list, _ := h.b.HeldSnapshots(h.ctx); len(list) != 0 {
		t.Errorf("the store lists %d snapshots", len(list))
	}
	for _, d := range []string{dirSnapshots, dirTmp} {
		if left, _ := os.ReadDir(h.b.path(d)); len(left) != 0 {
			t.Errorf("the store's %s folder holds %s", d, left[0].Name())
		}
	}
	if n := contentCount(t, h.b); n != 0 {
		t.Errorf("the store holds %d pieces of content", n)
	}
}

// part is one file of an archive written by hand.
type part struct {
	name string
	data []byte
}

// contentOf is an archive's content part for data, and its hash.
func contentOf(data string) (part, string) {
	sum := sha256.Sum256([]byte(data))
	h := hex.EncodeToString(sum[:])
	return part{archiveContent + h, []byte(data)}, h
}

// craftManifest is a snapshot's manifest as a store keeps it, with the
// box's folder "." first unless es has it.
func craftManifest(t *testing.T, id string, es []entry) []byte {
	t.Helper()
	now := time.Now().UnixNano()
	if len(es) == 0 || es[0].Path != "." {
		es = append([]entry{{Path: ".", Type: typeDir, Mode: 0o755}}, es...)
	}
	for i := range es {
		if es[i].MTime == 0 {
			es[i].MTime, es[i].ATime = now, now
		}
	}
	m := manifest{Format: manifestFormat, ID: id, Guest: providers.Guest{Ref: "bxelsewhere", Kind: "linux"},
		CapturedAt: time.Now().UTC(), ResetVersion: 1, Entries: es}
	raw, err := encodeChecked(&m)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// craftArchive writes an archive by hand in ExportSnapshot's format: the
// description, the manifest, then the parts given.
func craftArchive(t *testing.T, id string, es []entry, parts ...part) []byte {
	t.Helper()
	raw := craftManifest(t, id, es)
	info, _ := json.Marshal(archiveInfo{Format: archiveFormat, ID: id, Name: id, ManifestSum: sha256Hex(raw)})
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, p := range append([]part{{archiveMeta, info}, {archiveManifest, raw}}, parts...) {
		if err := tw.WriteHeader(&tar.Header{Name: p.name, Mode: 0o600, Size: int64(len(p.data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(p.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func (h hostile) importArchive(archive []byte) error {
	_, err := h.b.ImportSnapshots(h.ctx, providers.ImportOptions{Group: h.g.Ref}, []io.Reader{bytes.NewReader(archive)})
	return err
}

// refusedWith fails the test unless err is a refusal holding every one of
// words.
func refusedWith(t *testing.T, err error, words ...string) {
	t.Helper()
	var re *providers.RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("answered %v, want a refusal", err)
	}
	for _, w := range words {
		if !strings.Contains(re.Why, w) {
			t.Errorf("the refusal %q does not say %q", re.Why, w)
		}
	}
}

// TestRestoreNeverWritesThroughALink: a restore writes beneath the box's
// folder only, never through a link. A manifest put into the store by hand
// with a link and a file beneath it is refused before anything changes; and
// where the box's process swapped a folder for a link to a host folder
// after the restore read the box, every write beneath it fails, and the
// host folder is left as it was.
func TestRestoreNeverWritesThroughALink(t *testing.T) {
	t.Parallel()
	t.Run("a manifest in the store", func(t *testing.T) {
		t.Parallel()
		h := setupHostile(t)
		h.write(t, "mine.txt", "the box's own")
		_, ref := h.take(t)
		h.write(t, "later.txt", "written after the take")
		pwned, ph := contentOf("pwned")
		if err := os.MkdirAll(filepath.Dir(h.b.contentPath(ph)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(h.b.contentPath(ph), pwned.data, 0o444); err != nil {
			t.Fatal(err)
		}
		m, err := h.b.manifest(ref.Ref)
		if err != nil {
			t.Fatal(err)
		}
		es := append([]entry(nil), m.Entries...)
		es = append(es, entry{Path: "a", Type: typeLink, Target: h.outside},
			entry{Path: "a/through-link.txt", Type: typeFile, Mode: 0o644, Size: 5, Hash: ph})
		sortEntries(es)
		c := *m
		c.Entries = es
		raw, err := encodeChecked(&c)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(h.b.snapDir(ref.Ref), fileManifest), raw, 0o600); err != nil {
			t.Fatal(err)
		}
		refusedWith(t, h.restore(t, ref), `Snapshot `+ref.Ref+` cannot be restored: the entry "a/through-link.txt" lies beneath the link "a"`, "Nothing was changed")
		h.untouched(t)
		if h.read(t, "later.txt") != "written after the take" {
			t.Error("the refused restore changed the box")
		}
		if _, err := os.Lstat(filepath.Join(h.dir, "a")); err == nil {
			t.Error("the refused restore made the link")
		}
		_, err = h.b.ForkSnapshot(h.ctx, ref, providers.BoxIdentity{ID: "bxforkhostile"}, nil)
		refusedWith(t, err, `lies beneath the link "a"`)
		h.untouched(t)
	})

	t.Run("a folder swapped for a link", func(t *testing.T) {
		t.Parallel()
		h := setupHostile(t)
		h.write(t, "docs/a.txt", "version one")
		h.write(t, "docs/keep.txt", "kept")
		if err := syscall.Mkfifo(filepath.Join(h.dir, "docs", "pipe"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(h.dir, "docs", "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("a.txt", filepath.Join(h.dir, "docs", "ln")); err != nil {
			t.Fatal(err)
		}
		_, ref := h.take(t)
		m, err := h.b.manifest(ref.Ref)
		if err != nil {
			t.Fatal(err)
		}
		// The box changes docs; the restore reads the box; then the box's
		// process swaps docs for a link to a host folder.
		h.write(t, "docs/a.txt", "version two")
		for _, p := range []string{"pipe", "sub", "ln"} {
			if err := os.Remove(filepath.Join(h.dir, "docs", p)); err != nil {
				t.Fatal(err)
			}
		}
		found, err := h.b.scanTree(h.ctx, h.dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(h.dir, "docs"), filepath.Join(h.dir, "docs-moved")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(h.outside, filepath.Join(h.dir, "docs")); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(h.outside, "keep.txt"), []byte("the host's"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := h.b.apply(h.ctx, h.dir, m, nil, found); err == nil {
			t.Error("a restore through a link swapped in for a folder did not fail")
		}
		left, _ := os.ReadDir(h.outside)
		if len(left) != 1 || left[0].Name() != "keep.txt" {
			var names []string
			for _, d := range left {
				names = append(names, d.Name())
			}
			t.Errorf("the host folder holds %v after the restore, want only keep.txt", names)
		}
		fi, err := os.Stat(filepath.Join(h.outside, "keep.txt"))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("the host's keep.txt changed: %v, %v", fi, err)
		}
		if data, _ := os.ReadFile(filepath.Join(h.outside, "keep.txt")); string(data) != "the host's" {
			t.Errorf("the host's keep.txt holds %q", data)
		}
	})
}
