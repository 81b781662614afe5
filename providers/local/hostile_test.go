package local

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/confined"
	"github.com/boxsnap/boxsnap/providers/local/exports"
	"github.com/boxsnap/boxsnap/providers/local/process"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// Hostile archives and manifests: nothing inside a box or an archive reaches
// the host.

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
	for _, d := range []string{store.DirSnapshots, store.DirTmp} {
		if left, _ := os.ReadDir(h.b.Path(d)); len(left) != 0 {
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
	return part{exports.ArchiveContent + h, []byte(data)}, h
}

// craftManifest is a snapshot's manifest as a store keeps it, with the
// box's folder "." first unless es has it.
func craftManifest(t *testing.T, id string, es []store.Entry) []byte {
	t.Helper()
	now := time.Now().UnixNano()
	if len(es) == 0 || es[0].Path != "." {
		es = append([]store.Entry{{Path: ".", Type: store.TypeDir, Mode: 0o755}}, es...)
	}
	for i := range es {
		if es[i].MTime == 0 {
			es[i].MTime, es[i].ATime = now, now
		}
	}
	m := store.Manifest{Format: store.ManifestFormat, ID: id, Guest: providers.Guest{Ref: "bxelsewhere", Kind: "linux"},
		CapturedAt: time.Now().UTC(), ResetVersion: 1, Entries: es}
	raw, err := store.EncodeChecked(&m)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// craftArchive writes an archive by hand in ExportSnapshot's format: the
// description, the manifest, then the parts given.
func craftArchive(t *testing.T, id string, es []store.Entry, parts ...part) []byte {
	t.Helper()
	raw := craftManifest(t, id, es)
	info, _ := json.Marshal(exports.ArchiveInfo{Format: exports.ArchiveFormat, ID: id, Name: id, ManifestSum: store.Sha256Hex(raw)})
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, p := range append([]part{{exports.ArchiveMeta, info}, {exports.ArchiveManifest, raw}}, parts...) {
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

// TestImportRefusesEntriesOutsideTheBox: an archive whose manifest holds a
// path that leads out of the box (a ".." part anywhere in it, or a full
// path), or a path beneath a link, is refused as a whole with words naming the first such path, and
// leaves nothing in the store; restoring or forking it afterwards writes
// nothing outside the box either.
func TestImportRefusesEntriesOutsideTheBox(t *testing.T) {
	t.Parallel()
	pwned, ph := contentOf("pwned")
	file := func(p string) store.Entry {
		return store.Entry{Path: p, Type: store.TypeFile, Mode: 0o644, Size: 5, Hash: ph}
	}
	for _, c := range []struct {
		name  string
		es    []store.Entry
		parts []part
		words []string
	}{
		{"a file up and out", []store.Entry{file(up + "/pwned.txt")}, []part{pwned},
			[]string{`"../../../outside/pwned.txt" goes up out of its folder`}},
		{"a full path", []store.Entry{file("/" + strings.TrimPrefix(filepath.ToSlash(os.TempDir()), "/") + "/abs-pwned.txt")}, []part{pwned},
			[]string{"is a full path"}},
		{"a file through a link", []store.Entry{{Path: "a", Type: store.TypeLink, Target: "OUTSIDE"}, file("a/through-link.txt")}, []part{pwned},
			[]string{`"a/through-link.txt" lies beneath the link "a"`}},
		{"a folder through a link", []store.Entry{{Path: "a", Type: store.TypeLink, Target: "OUTSIDE"}, {Path: "a/made", Type: store.TypeDir, Mode: 0o755}}, nil,
			[]string{`"a/made" lies beneath the link "a"`}},
		{"a dot-dot inside a path", []store.Entry{{Path: "a", Type: store.TypeDir, Mode: 0o755}, file("a/../../../../outside/pwned.txt")}, []part{pwned},
			[]string{`"a/../../../../outside/pwned.txt" goes up out of its folder`}},
		{"a folder outside", []store.Entry{{Path: up + "/made", Type: store.TypeDir, Mode: 0o755}}, nil,
			[]string{`"../../../outside/made" goes up`}},
		{"a pipe outside", []store.Entry{{Path: up + "/pipe", Type: store.TypeFIFO, Mode: 0o644}}, nil,
			[]string{`"../../../outside/pipe" goes up`}},
		{"a link outside", []store.Entry{{Path: up + "/ln", Type: store.TypeLink, Target: "/etc/passwd"}}, nil,
			[]string{`"../../../outside/ln" goes up`}},
		{"a file in a folder not listed", []store.Entry{file("nowhere/f")}, []part{pwned},
			[]string{`"nowhere/f" lies in "nowhere", which is not an entry`}},
		{"a doubled slash", []store.Entry{{Path: "d", Type: store.TypeDir}, file("d//f")}, []part{pwned},
			[]string{`"d//f" has an empty part`}},
		{"a dot part", []store.Entry{{Path: "d", Type: store.TypeDir}, file("d/./f")}, []part{pwned},
			[]string{`"d/./f" has a “.” part`}},
		{"a NUL", []store.Entry{file("f\x00g")}, []part{pwned}, []string{"NUL"}},
		{"a path twice", []store.Entry{file("f"), file("f")}, []part{pwned}, []string{`"f" is listed twice`}},
		{"an unknown type", []store.Entry{{Path: "dev", Type: "c"}}, nil, []string{`"dev" is of an unknown type`}},
		{"a long name", []store.Entry{file(strings.Repeat("n", 256))}, []part{pwned}, []string{"longer than 255 bytes"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := setupHostile(t)
			h.write(t, "mine.txt", "the box's own")
			for i := range c.es {
				if c.es[i].Target == "OUTSIDE" {
					c.es[i].Target = h.outside
				}
			}
			id := "snhostile" + strconv.Itoa(len(c.name))
			err := h.importArchive(craftArchive(t, id, c.es, c.parts...))
			refusedWith(t, err, append(c.words, "Nothing was imported")...)
			h.emptyStore(t)
			// Were it in the store, neither a restore nor a fork of it may
			// write outside.
			_, _ = h.b.RestoreSnapshot(h.ctx, h.g, providers.SnapshotRef{ID: id, Ref: id}, providers.StepRollback, nil)
			_, _ = h.b.ForkSnapshot(h.ctx, providers.SnapshotRef{ID: id, Ref: id}, providers.BoxIdentity{ID: "bxfork" + id}, nil)
			h.untouched(t)
			if got := h.read(t, "mine.txt"); got != "the box's own" {
				t.Errorf("the box's own file holds %q", got)
			}
		})
	}
}

// boxUID is the owner an import gives its paths: the box's user.
func boxUID(t *testing.T) (uint32, uint32) {
	t.Helper()
	if os.Geteuid() != 0 {
		return uint32(os.Geteuid()), uint32(os.Getegid())
	}
	u, err := user.Lookup(process.DefaultBoxUser)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return uint32(uid), uint32(gid)
}

// TestImportMapsOwnersAndClearsSetuid: an imported snapshot's paths belong
// to the importing box's user, not to the owners another host gave them
// (root here), and lose their setuid, setgid and sticky bits; restored, the
// files are so on disk. The same archive imported again is already here.
func TestImportMapsOwnersAndClearsSetuid(t *testing.T) {
	t.Parallel()
	h := setupHostile(t)
	tool, th := contentOf("#!/bin/sh\necho I am root\n")
	special := func(m fs.FileMode) uint32 { return uint32(m.Perm() | m&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)) }
	archive := craftArchive(t, "snowners00001", []store.Entry{
		{Path: ".", Type: store.TypeDir, Mode: 0o755},
		{Path: "bin", Type: store.TypeDir, Mode: special(0o755 | fs.ModeSetgid)},
		{Path: "bin/tool", Type: store.TypeFile, Mode: special(0o755 | fs.ModeSetuid | fs.ModeSetgid), Size: int64(len("#!/bin/sh\necho I am root\n")), Hash: th},
		{Path: "bin/tool-link", Type: store.TypeLink, Target: "tool"},
		{Path: "scratch", Type: store.TypeDir, Mode: special(0o777 | fs.ModeSticky)},
		{Path: "scratch/pipe", Type: store.TypeFIFO, Mode: 0o600},
	}, tool)
	if err := h.importArchive(archive); err != nil {
		t.Fatal(err)
	}
	uid, gid := boxUID(t)
	m, err := h.b.Manifest("snowners00001")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range m.Entries {
		if e.UID != uid || e.GID != gid || e.Mode&^uint32(fs.ModePerm) != 0 {
			t.Errorf("the imported entry %s is owned by %d:%d with mode %v, want %d:%d and no special bits", e.Path, e.UID, e.GID, e.FileMode(), uid, gid)
		}
	}
	again, err := h.b.ImportSnapshots(h.ctx, providers.ImportOptions{Group: h.g.Ref}, []io.Reader{bytes.NewReader(archive)})
	if err != nil || len(again) != 1 || !again[0].Already {
		t.Fatalf("the same archive again = %+v, %v", again, err)
	}

	if err := h.restore(t, providers.SnapshotRef{ID: "snowners00001", Ref: "snowners00001", Guest: h.g}); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{".", "bin", "bin/tool", "bin/tool-link", "scratch", "scratch/pipe"} {
		fi, err := os.Lstat(filepath.Join(h.dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 {
			t.Errorf("restored, %s has mode %v", rel, fi.Mode())
		}
		if os.Geteuid() == 0 && (st.Uid != uid || st.Gid != gid) {
			t.Errorf("restored, %s is owned by %d:%d, want the box's user %d:%d", rel, st.Uid, st.Gid, uid, gid)
		}
	}
	if fi, _ := os.Stat(filepath.Join(h.dir, "bin", "tool")); fi.Mode().Perm() != 0o755 {
		t.Errorf("restored, bin/tool has mode %v, want 0755", fi.Mode())
	}
}

// countingReader counts what is read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestImportBounded: what an import reads is bounded: a manifest over its
// bound, and content its manifest does not name (each its own test below).
func TestImportBounded(t *testing.T) {
	t.Parallel()
	t.Run("a huge manifest", testImportRefusesAHugeManifest)
	t.Run("content no entry names", testImportRefusesUnreferencedContent)
}

// testImportRefusesAHugeManifest: a manifest over the bound is refused by
// its size, before it is read (the import reads a few KiB of an archive
// that goes on for 256 MiB); a small manifest that says it holds more
// entries than the bound, or than its bytes can hold, is refused before it
// is decoded. Nothing is left in the store.
func testImportRefusesAHugeManifest(t *testing.T) {
	t.Parallel()
	h := setupHostile(t)
	pr, pw := io.Pipe()
	go func() {
		zw, _ := gzip.NewWriterLevel(pw, gzip.NoCompression)
		tw := tar.NewWriter(zw)
		info, _ := json.Marshal(exports.ArchiveInfo{Format: exports.ArchiveFormat, ID: "snhuge0000001", Name: "snhuge0000001", ManifestSum: strings.Repeat("0", 64)})
		_ = tw.WriteHeader(&tar.Header{Name: exports.ArchiveMeta, Mode: 0o600, Size: int64(len(info)), Typeflag: tar.TypeReg})
		_, _ = tw.Write(info)
		_ = tw.WriteHeader(&tar.Header{Name: exports.ArchiveManifest, Mode: 0o600, Size: confined.MaxManifestBytes + 1, Typeflag: tar.TypeReg})
		chunk := make([]byte, 1<<20)
		for left := int64(confined.MaxManifestBytes + 1); left > 0; left -= int64(len(chunk)) {
			if _, err := tw.Write(chunk[:min(left, int64(len(chunk)))]); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		_ = tw.Close()
		_ = zw.Close()
		pw.Close()
	}()
	cr := &countingReader{r: pr}
	_, err := h.b.ImportSnapshots(h.ctx, providers.ImportOptions{Group: h.g.Ref}, []io.Reader{cr})
	pr.CloseWithError(errors.New("the test stopped reading"))
	refusedWith(t, err, "its manifest is 268435457 bytes, more than the 256 MiB a manifest may be", "Nothing was imported")
	if cr.n > 1<<20 {
		t.Errorf("the import read %d bytes of the archive before it refused the manifest", cr.n)
	}
	h.emptyStore(t)

	// A count of entries past the bound, in a manifest of a few bytes.
	for _, c := range []struct {
		count uint64
		words string
	}{{confined.MaxEntries + 1, "it has 2000001 entries, more than the 2000000"}, {1000, "it says it has 1000 entries, more than its"}} {
		hdr, _ := json.Marshal(store.Manifest{Format: store.ManifestFormat, ID: "snhuge0000002"})
		body := binary.AppendUvarint([]byte(store.ManifestMagic), uint64(len(hdr)))
		body = append(body, hdr...)
		body = binary.AppendUvarint(body, c.count)
		body = append(body, make([]byte, 64)...)
		sum := sha256.Sum256(body)
		raw := append([]byte(store.ChecksumPrefix+hex.EncodeToString(sum[:])+"\n"), body...)
		info, _ := json.Marshal(exports.ArchiveInfo{Format: exports.ArchiveFormat, ID: "snhuge0000002", Name: "snhuge0000002", ManifestSum: store.Sha256Hex(raw)})
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		tw := tar.NewWriter(zw)
		for _, p := range []part{{exports.ArchiveMeta, info}, {exports.ArchiveManifest, raw}} {
			_ = tw.WriteHeader(&tar.Header{Name: p.name, Mode: 0o600, Size: int64(len(p.data)), Typeflag: tar.TypeReg})
			_, _ = tw.Write(p.data)
		}
		_ = tw.Close()
		_ = zw.Close()
		refusedWith(t, h.importArchive(buf.Bytes()), c.words, "Nothing was imported")
		h.emptyStore(t)
	}
}

// testImportRefusesUnreferencedContent: an archive that carries content no
// entry of its manifest uses, content of another size than its entry gives,
// or content whose hash does not match, is refused, and nothing of it is
// left in the store.
func testImportRefusesUnreferencedContent(t *testing.T) {
	t.Parallel()
	used, uh := contentOf("used")
	stray, sh := contentOf("stray: a file no entry names")
	es := []store.Entry{{Path: "f", Type: store.TypeFile, Mode: 0o644, Size: 4, Hash: uh}}
	wrongSize := []store.Entry{{Path: "f", Type: store.TypeFile, Mode: 0o644, Size: 3, Hash: uh}}
	forged := part{used.name, []byte("USED")}
	for _, c := range []struct {
		name  string
		es    []store.Entry
		parts []part
		words string
	}{
		{"stray content", es, []part{used, stray}, "it carries content " + sh[:12] + " that no entry of its manifest uses"},
		{"stray content first", es, []part{stray, used}, "it carries content " + sh[:12] + " that no entry of its manifest uses"},
		{"another size", wrongSize, []part{used}, "its content " + uh[:12] + " is 4 bytes, not the 3 its manifest gives"},
		{"another hash", es, []part{forged}, "its content " + uh[:12] + " does not match its hash"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := setupHostile(t)
			refusedWith(t, h.importArchive(craftArchive(t, "snstray000001", c.es, c.parts...)), c.words, "Nothing was imported")
			h.emptyStore(t)
		})
	}
	// The same archive without the stray content is imported.
	h := setupHostile(t)
	if err := h.importArchive(craftArchive(t, "snstray000001", es, used)); err != nil {
		t.Fatal(err)
	}
	if n := contentCount(t, h.b); n != 1 {
		t.Fatalf("the import kept %d pieces of content, want 1", n)
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
		if err := os.MkdirAll(filepath.Dir(h.b.ContentPath(ph)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(h.b.ContentPath(ph), pwned.data, 0o444); err != nil {
			t.Fatal(err)
		}
		m, err := h.b.Manifest(ref.Ref)
		if err != nil {
			t.Fatal(err)
		}
		es := append([]store.Entry(nil), m.Entries...)
		es = append(es, store.Entry{Path: "a", Type: store.TypeLink, Target: h.outside},
			store.Entry{Path: "a/through-link.txt", Type: store.TypeFile, Mode: 0o644, Size: 5, Hash: ph})
		store.SortEntries(es)
		c := *m
		c.Entries = es
		raw, err := store.EncodeChecked(&c)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(h.b.SnapDir(ref.Ref), store.FileManifest), raw, 0o600); err != nil {
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
		m, err := h.b.Manifest(ref.Ref)
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
		found, err := h.b.ScanTree(h.ctx, h.dir)
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
		if _, err := h.b.Apply(h.ctx, h.dir, m, nil, found); err == nil {
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
