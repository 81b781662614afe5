package contents_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/providers"
)

// TestBrowseSnapshot browses a snapshot as Browse files should:
// folders first, sizes and modes, links shown as links and never followed,
// a file's text inline with a cap that says so, a download recorded in the
// box log with who made it, paths that leave the snapshot refused in words,
// and another thread's agent reading the snapshot as a made-up one.
func TestBrowseSnapshot(t *testing.T) {
	t.Parallel()
	e := coretest.New(t, coretest.Options{})
	ctx := context.Background()
	th, agent, _ := e.Thread(t, "Fix the sign-in flow")
	_, other, _ := e.Thread(t, "Another thread")
	b := e.Box(t, agent, "amber-fox")
	dir := e.Local.BoxDir(providers.Guest{Ref: b.GuestRef})
	big := strings.Repeat("a line of the log\n", 20000) // 360,000 bytes
	writeTree(t, dir, map[string]string{
		"README.md":       "# amber-fox\nhello\n",
		"src/main.go":     "package main\n",
		"src/deep/x.txt":  "x\n",
		"logs/big.log":    big,
		"zz-binary.dat":   "\x00\x01\x02binary",
		"aa-first-file.t": "first\n",
	})
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "passwd-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("src", filepath.Join(dir, "src-link")); err != nil {
		t.Fatal(err)
	}
	sn := e.TakeReady(t, agent, b.Name, "before")

	top, err := e.Contents.Browse(ctx, agent, sn.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, en := range top.Entries {
		names = append(names, en.Path+":"+en.Type)
	}
	want := "logs:dir src:dir README.md:file aa-first-file.t:file passwd-link:link src-link:link zz-binary.dat:file"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("top folder lists\n%s\nwant (folders first, boxsnap's own folder left out)\n%s", got, want)
	}
	for _, en := range top.Entries {
		switch en.Path {
		case "passwd-link":
			if en.Target != "/etc/passwd" {
				t.Fatalf("the link's target is %q", en.Target)
			}
		case "README.md":
			if en.Size != 18 || en.Mode&0o777 != 0o644 || en.ModTime.IsZero() {
				t.Fatalf("README.md listed as %+v", en)
			}
		}
	}
	sub, err := e.Contents.Browse(ctx, agent, sn.ID, "src")
	if err != nil || len(sub.Entries) != 2 || sub.Entries[0].Path != "src/deep" || sub.Entries[1].Path != "src/main.go" {
		t.Fatalf("src lists %+v, %v", sub, err)
	}

	shown, err := e.Contents.ShowFile(ctx, agent, sn.ID, "README.md")
	if err != nil || shown.Text != "# amber-fox\nhello\n" || shown.Cut != "" || shown.Binary {
		t.Fatalf("README.md shown as %+v, %v", shown, err)
	}
	shown, err = e.Contents.ShowFile(ctx, agent, sn.ID, "logs/big.log")
	if err != nil {
		t.Fatal(err)
	}
	if len(shown.Text) != contents.MaxShownBytes || shown.Cut != "Showing the first 262 KB of 360 KB: download the file for all of it." {
		t.Fatalf("big.log shown with %d bytes, cut %q", len(shown.Text), shown.Cut)
	}
	if shown, err = e.Contents.ShowFile(ctx, agent, sn.ID, "zz-binary.dat"); err != nil || !shown.Binary || shown.Text != "" {
		t.Fatalf("a binary file shown as %+v, %v", shown, err)
	}
	if shown, err = e.Contents.ShowFile(ctx, agent, sn.ID, "passwd-link"); err != nil || shown.Entry.Type != "link" || shown.Text != "" {
		t.Fatalf("a link shown as %+v, %v: it must be shown as a link, never followed", shown, err)
	}

	// Paths that leave the snapshot are refused in words.
	for p, words := range map[string]string{
		"../../etc/passwd":   `The path "../../etc/passwd" climbs out of the snapshot with ..: paths are inside the box's folder.`,
		"src/../../x":        `The path "src/../../x" climbs out of the snapshot with ..: paths are inside the box's folder.`,
		"/etc/passwd":        `The path "/etc/passwd" is absolute: paths are inside the snapshot, relative to the box's folder.`,
		"src-link/main.go":   "src-link is a link to src, which is never followed.",
		".boxsnap/env":       ".boxsnap holds boxsnap's own files, such as the box's access, and is not browsed.",
		"passwd-link/shadow": "passwd-link is a link to /etc/passwd, which is never followed.",
	} {
		_, err := e.Contents.ShowFile(ctx, agent, sn.ID, p)
		coretest.RefusedWith(t, err, words)
		_, err = e.Contents.OpenDownload(ctx, agent, sn.ID, p)
		coretest.RefusedWith(t, err, words)
	}
	_, err = e.Contents.OpenDownload(ctx, agent, sn.ID, "passwd-link")
	coretest.RefusedWith(t, err, "/passwd-link is a link to /etc/passwd, which is never followed: download what it points to instead.")

	// Another thread's agent reads it as a made-up ID.
	made := snapshots.NewID(snapshots.PrefixSnapshot)
	for _, id := range []string{sn.ID, made} {
		_, err := e.Contents.Browse(ctx, other, id, "")
		coretest.RefusedWith(t, err, "No snapshot "+id+" that you can see.")
		_, err = e.Contents.OpenDownload(ctx, other, id, "README.md")
		coretest.RefusedWith(t, err, "No snapshot "+id+" that you can see.")
		_, err = e.Contents.Compare(ctx, other, id, "", 0, 10)
		coretest.RefusedWith(t, err, "No snapshot "+id+" that you can see.")
	}

	// A download gives the file and is recorded with who made it.
	d, err := e.Contents.OpenDownload(ctx, agent, sn.ID, "src/main.go")
	if err != nil || d.Folder || d.Name != "main.go" || d.Size != 13 {
		t.Fatalf("download %+v, %v", d, err)
	}
	var buf bytes.Buffer
	if err := d.WriteTo(ctx, &buf); err != nil || buf.String() != "package main\n" {
		t.Fatalf("downloaded %q, %v", buf.String(), err)
	}
	events, err := e.Boxes.BoxLog(ctx, snapshots.Owner(), b.Name, 50)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ev := range events {
		if ev.Kind == contents.EvDownloaded && ev.Words == "/src/main.go (13 bytes) of ‘before’" &&
			ev.ActorKind == "agent" && ev.ActorThread != nil && *ev.ActorThread == th.ID {
			found = true
		}
	}
	if !found {
		t.Fatalf("no download by the agent of %s in the box log: %+v", th.ID, events)
	}
}

// TestCompareWithNow compares a snapshot with the box now and with a later
// snapshot: added, removed and changed with their sizes, paged, the words
// of the restore dialog, and a unified diff of a text file.
func TestCompareWithNow(t *testing.T) {
	t.Parallel()
	e := coretest.New(t, coretest.Options{})
	ctx := context.Background()
	owner := snapshots.Owner()
	b := e.Box(t, owner, "birch-elk")
	dir := e.Local.BoxDir(providers.Guest{Ref: b.GuestRef})
	writeTree(t, dir, map[string]string{
		"same.txt":      "unchanged\n",
		"edited.txt":    "one\ntwo\nthree\n",
		"sized.txt":     "short\n",
		"gone.txt":      "bye\n",
		"keep/deep.txt": "deep\n",
	})
	sn := e.TakeReady(t, owner, b.Name, "before")

	nothing, err := e.Contents.Compare(ctx, owner, sn.ID, "", 0, 10)
	if err != nil || nothing.Total != 0 || nothing.Words != "Nothing changed since then" {
		t.Fatalf("just after the take: %+v, %v", nothing, err)
	}

	// edited.txt keeps its size, so only its content tells.
	writeTree(t, dir, map[string]string{
		"edited.txt":  "one\nTWO\nthree\n",
		"sized.txt":   "much longer now\n",
		"new/new.txt": "new\n",
	})
	if err := os.Remove(filepath.Join(dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	cmp, err := e.Contents.Compare(ctx, owner, sn.ID, "", 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if cmp.Words != "2 files changed, 2 added, 1 removed since then" || cmp.Total != 5 {
		t.Fatalf("comparison says %q (%d)", cmp.Words, cmp.Total)
	}
	var lines []string
	for off := 0; off < cmp.Total; off += 2 {
		page, err := e.Contents.Compare(ctx, owner, sn.ID, "", off, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Changes) > 2 || page.Offset != off {
			t.Fatalf("page at %d has %d changes", off, len(page.Changes))
		}
		for _, ch := range page.Changes {
			lines = append(lines, ch.Change+" "+ch.Path+" "+sizes(ch))
		}
	}
	want := "changed edited.txt 14→14|removed gone.txt 4→|added new →|added new/new.txt →4|changed sized.txt 6→16"
	if got := strings.Join(lines, "|"); got != want {
		t.Fatalf("pages list\n%s\nwant\n%s", got, want)
	}

	diff, err := e.Contents.DiffFile(ctx, owner, sn.ID, "", "edited.txt")
	if err != nil {
		t.Fatal(err)
	}
	wantDiff := "--- a/edited.txt\n+++ b/edited.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
	if diff != wantDiff {
		t.Fatalf("diff\n%s\nwant\n%s", diff, wantDiff)
	}
	if diff, err := e.Contents.DiffFile(ctx, owner, sn.ID, "", "same.txt"); err != nil || diff != "" {
		t.Fatalf("an unchanged file's diff is %q, %v", diff, err)
	}

	// Against a later snapshot of the same box: the same list.
	later := e.TakeReady(t, owner, b.Name, "later")
	vs, err := e.Contents.Compare(ctx, owner, sn.ID, later.ID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if vs.Words != "2 files changed, 2 added, 1 removed in ‘later’" || vs.Total != 5 {
		t.Fatalf("against ‘later’: %q", vs.Words)
	}
	// A snapshot of another box is refused.
	b2 := e.Box(t, owner, "cedar-owl")
	other := e.TakeReady(t, owner, b2.Name, "elsewhere")
	_, err = e.Contents.Compare(ctx, owner, sn.ID, other.ID, 0, 10)
	coretest.RefusedWith(t, err, "No snapshot "+other.ID+" that you can see.")
}

func sizes(ch providers.FileChange) string {
	s := func(p *int64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatInt(*p, 10)
	}
	return s(ch.Before) + "→" + s(ch.After)
}

// TestDownloadFolderStreams downloads a 256 MiB folder of a snapshot as a
// tar.gz and checks that memory stays flat: the bytes the Go heap allocated
// while the whole folder was written are a small fraction of the folder.
func TestDownloadFolderStreams(t *testing.T) {
	// A box's disk bound that holds the folder.
	e := coretest.New(t, coretest.Options{DiskBytes: 512 << 20})
	ctx := context.Background()
	owner := snapshots.Owner()
	b := e.Box(t, owner, "large-yak")
	dir := e.Local.BoxDir(providers.Guest{Ref: b.GuestRef})
	const files, each = 64, 4 << 20 // 256 MiB
	rng := rand.New(rand.NewChaCha8([32]byte{1}))
	sums := map[string][32]byte{}
	chunk := make([]byte, each)
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < files; i++ {
		for j := 0; j < len(chunk); j += 8 {
			// Four bits of each byte random: compressible a little, like real files.
			binary.LittleEndian.PutUint64(chunk[j:], rng.Uint64()&0x0f0f0f0f0f0f0f0f)
		}
		name := "data/part-" + strconv.Itoa(100+i)
		if err := os.WriteFile(filepath.Join(dir, name), chunk, 0o644); err != nil {
			t.Fatal(err)
		}
		sums["large-yak/"+name] = sha256.Sum256(chunk)
	}
	if err := os.Symlink("data/part-100", filepath.Join(dir, "latest")); err != nil {
		t.Fatal(err)
	}
	chunk = nil
	sn := e.TakeReady(t, owner, b.Name, "large")

	d, err := e.Contents.OpenDownload(ctx, owner, sn.ID, "")
	if err != nil || !d.Folder || d.Name != "large-yak.tar.gz" {
		t.Fatalf("download %+v, %v", d, err)
	}
	// The test reads the tar.gz as it is written, through a pipe, and
	// checks every file's content.
	pr, pw := io.Pipe()
	got := map[string][32]byte{}
	var link string
	done := make(chan error, 1)
	go func() {
		zr, err := gzip.NewReader(pr)
		if err != nil {
			done <- err
			return
		}
		tr := tar.NewReader(zr)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				done <- nil
				return
			}
			if err != nil {
				done <- err
				return
			}
			switch h.Typeflag {
			case tar.TypeReg:
				hs := sha256.New()
				if _, err := io.Copy(hs, tr); err != nil {
					done <- err
					return
				}
				var sum [32]byte
				copy(sum[:], hs.Sum(nil))
				got[h.Name] = sum
			case tar.TypeSymlink:
				link = h.Name + " -> " + h.Linkname
			}
		}
	}()
	// The download needs no job: River's client stops first, so its fetch
	// loop, which polls the more often the longer the write takes (under
	// load: 22 MiB once), is not counted as the download's.
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	if err := e.Client.Stop(sctx); err != nil {
		t.Fatalf("stop the jobs' client: %v", err)
	}
	cancel()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	werr := d.WriteTo(ctx, pw)
	runtime.ReadMemStats(&after)
	pw.CloseWithError(werr)
	if werr != nil {
		t.Fatal(werr)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(got) != files || link != "large-yak/latest -> data/part-100" {
		t.Fatalf("the tar.gz holds %d files (want %d) and link %q", len(got), files, link)
	}
	for name, sum := range sums {
		if got[name] != sum {
			t.Fatalf("%s differs in the tar.gz", name)
		}
	}
	// Everything the process allocated meanwhile (the reader's side, the
	// workers' polls and the writer's), against 256 MiB written.
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("256 MiB folder streamed with %d KiB allocated; heap in use %d KiB before, %d KiB after",
		allocated>>10, before.HeapInuse>>10, after.HeapInuse>>10)
	if allocated > 16<<20 {
		t.Fatalf("writing a 256 MiB folder allocated %d MiB: it is not streamed", allocated>>20)
	}
}
