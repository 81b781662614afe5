package local

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/confined"
	"github.com/boxsnap/boxsnap/providers/local/disks"
	"github.com/boxsnap/boxsnap/providers/local/process"
	"github.com/boxsnap/boxsnap/providers/local/store"
	"github.com/boxsnap/boxsnap/providers/providertest"
)

// allocated is what a file holds on disk: st_blocks times 512.
func allocated(t *testing.T, path string) int64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks * 512
}

// fileHash is the SHA-256 of the file at path, read as a stream.
func fileHash(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestTakeKeepsSparseFiles: a take copies only a sparse file's data, and a
// restore gives back a sparse file with the same bytes.
func TestTakeKeepsSparseFiles(t *testing.T) {
	e := setup(t)
	p := filepath.Join(e.dir, "disk.img")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	const size = 1 << 30
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("boxsnap"), 600) // about 4 KiB
	for _, off := range []int64{0, 300 << 20, size - int64(len(data))} {
		if _, err := f.WriteAt(data, off); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if a := allocated(t, p); a > 1<<20 {
		t.Fatalf("the test file itself holds %d bytes on disk", a)
	}
	want := fileHash(t, p)

	taken, ref := e.take(t)
	m, err := e.b.Manifest(taken.Ref)
	if err != nil {
		t.Fatal(err)
	}
	var hash string
	for _, en := range m.Entries {
		if en.Path == "disk.img" {
			hash = en.Hash
		}
	}
	if hash == "" {
		t.Fatal("disk.img is not in the snapshot")
	}
	if a := allocated(t, e.b.ContentPath(hash)); a > 1<<20 {
		t.Fatalf("the take's copy of a 1 GiB sparse file holding 12 KiB of data holds %d bytes on disk; want under 1 MiB", a)
	}

	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := e.restore(t, ref); err != nil {
		t.Fatalf("restore: %v", err)
	}
	if a := allocated(t, p); a > 1<<20 {
		t.Fatalf("the restored sparse file holds %d bytes on disk; want under 1 MiB", a)
	}
	if got := fileHash(t, p); got != want {
		t.Fatal("the restored sparse file's bytes differ from the ones taken")
	}
}

// smallStore mounts a fresh ext4 file system of size bytes (a loop device)
// and answers its folder: a store whose room a test can fill.
func smallStore(t *testing.T, size int64) string {
	t.Helper()
	return providertest.Ext4(t, size, 0)
}

// TestTakeChecksTheRoomOnceTheCopysSizeIsKnown: a take whose copy would take
// the store past the room setting is refused then, in words, with nothing
// published and no content left behind; with room, the same take is held.
func TestTakeChecksTheRoomOnceTheCopysSizeIsKnown(t *testing.T) {
	e := setupAt(t, smallStore(t, 64<<20), "")
	e.write(t, "big", string(bytes.Repeat([]byte("x"), 24<<20)))
	s, err := e.b.Capturer.Storage()
	if err != nil {
		t.Fatal(err)
	}
	// The room setting sits above the store now and below it with the copy.
	room := int(s.PercentFull) + 5
	_, err = e.b.Snapshot(e.ctx, e.g, providers.SnapshotTake{Label: providers.Label{Box: e.g.Ref}, RoomPercent: room}, nil)
	var refused *providers.RefusedError
	if !errors.As(err, &refused) || !refused.TryAgain || !strings.Contains(err.Error(), "past the") {
		t.Fatalf("take past the room (store %.0f%% full, room %d%%): %v, want a refusal saying the store would be past the room", s.PercentFull, room, err)
	}
	if n := contentCount(t, e.b); n != 0 {
		t.Fatalf("%d content files left after the refused take", n)
	}
	if list, _ := e.b.HeldSnapshots(e.ctx); len(list) != 0 {
		t.Fatalf("the refused take published %d snapshots", len(list))
	}
	if _, err := e.b.Snapshot(e.ctx, e.g, providers.SnapshotTake{Label: providers.Label{Box: e.g.Ref}, RoomPercent: 99}, nil); err != nil {
		t.Fatalf("take with room: %v", err)
	}
}

// TestAnImportsTotalSizeIsBoundedAndCheckedAgainstTheRoom: a batch that
// unpacks past the import bound is refused as it comes, and one whose content
// would take the store past the room setting is refused before it is
// published; neither leaves anything behind. With room, it imports.
func TestAnImportsTotalSizeIsBoundedAndCheckedAgainstTheRoom(t *testing.T) {
	src := setup(t)
	for i := 0; i < 3; i++ {
		src.write(t, fmt.Sprintf("f%d", i), strings.Repeat(fmt.Sprintf("%07d ", i), 1<<17)) // 1 MiB each
	}
	_, ref := src.take(t)
	var archive bytes.Buffer
	if err := src.b.ExportSnapshot(src.ctx, ref, providers.ExportOptions{Name: "s1"}, &archive); err != nil {
		t.Fatal(err)
	}
	nothingLeft := func(b *Backend) {
		t.Helper()
		if list, _ := b.HeldSnapshots(t.Context()); len(list) != 0 {
			t.Fatalf("a refused import published %d snapshots", len(list))
		}
		if n := contentCount(t, b); n != 0 {
			t.Fatalf("a refused import left %d content files", n)
		}
		if left, _ := os.ReadDir(b.Path(store.DirTmp)); len(left) != 0 {
			t.Fatalf("a refused import left %d files in tmp", len(left))
		}
	}

	small, err := New(Config{Root: t.TempDir(), Install: "in-test", NoSync: true, MaxImportBytes: 2 << 20})
	if err != nil {
		t.Fatal(err)
	}
	unmountAtEnd(t, small)
	_, err = small.ImportSnapshots(t.Context(), providers.ImportOptions{Group: "received"}, []io.Reader{bytes.NewReader(archive.Bytes())})
	if err == nil || !strings.Contains(err.Error(), "more than the 2 MiB of content an import may hold") || !strings.Contains(err.Error(), "Nothing was imported") {
		t.Fatalf("an import past its bound answered %v", err)
	}
	nothingLeft(small)

	dst := setupAt(t, smallStore(t, 64<<20), "")
	s, err := dst.b.Capturer.Storage()
	if err != nil {
		t.Fatal(err)
	}
	room := int(s.PercentFull) + 1 // 3 MiB is about 5% of this store
	_, err = dst.b.ImportSnapshots(dst.ctx, providers.ImportOptions{Group: "received", RoomPercent: room}, []io.Reader{bytes.NewReader(archive.Bytes())})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("past the %d%%", room)) {
		t.Fatalf("an import past the room (store %.1f%% full, room %d%%) answered %v", s.PercentFull, room, err)
	}
	nothingLeft(dst.b)
	if _, err := dst.b.ImportSnapshots(dst.ctx, providers.ImportOptions{Group: "received", RoomPercent: 99}, []io.Reader{bytes.NewReader(archive.Bytes())}); err != nil {
		t.Fatalf("an import with room: %v", err)
	}
}

// TestBoxDiskBounded: a box with a 32 MiB disk bound is a file system of
// its own of that size: its command, writing 1 MiB files until a write
// fails, gets "No space left on device"; what its folder holds never
// passes the bound, on the host either; its status says it reached its
// bound and runs on, and its log says so in words with what to do; its
// earlier files are as they were, a take after holds them, and once room is
// made the words go while it still runs.
func TestBoxDiskBounded(t *testing.T) {
	loopOrSkip(t)
	root := t.TempDir()
	if err := process.Passable(root, "/"); err != nil {
		t.Fatal(err)
	}
	b, err := New(Config{Root: root, Install: "in-test", NoSync: true, StopTimeout: 2 * time.Second, DiskImages: true})
	if err != nil {
		t.Fatal(err)
	}
	unmountAtEnd(t, b)
	const bound = 32 << 20
	cmd := `i=0; while out=$(dd if=/dev/urandom of=f$i bs=64k count=16 2>&1); do i=$((i+1)); done; echo "write failed after $i files: $out" | head -1; sleep 60`
	g, err := b.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxdisk", Kind: "linux"}, Command: cmd,
		Limits: providers.BoxLimits{DiskBytes: bound}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop(context.Background(), g) })
	dir := b.BoxDir(g)
	if !disks.IsMounted(dir) {
		t.Fatal("the box's folder is not a file system of its own")
	}
	if fi, err := os.Stat(b.ImageFile(g.Ref)); err != nil || fi.Size() != bound {
		t.Fatalf("the box's image is %v (%v), want %d bytes", fi, err, bound)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 || ents[0].Name() != confined.MarkerDir {
		t.Fatalf("a new box's folder holds %v, want only %s (no lost+found)", ents, confined.MarkerDir)
	}
	e := env{b: b, g: g, dir: dir, ctx: t.Context()}
	e.write(t, "before.txt", "written before the box ran")
	_, before := e.take(t)
	if err := b.Start(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	var st providers.GuestStatus
	for {
		st, err = b.Status(t.Context(), g)
		if err != nil {
			t.Fatal(err)
		}
		if st.DiskStop != nil {
			break
		}
		if time.Now().After(deadline) {
			used, _ := b.DiskUse(t.Context(), dir)
			t.Fatalf("the box's status says nothing of its bound after 60 s, holding %d bytes on disk", used)
		}
		time.Sleep(50 * time.Millisecond)
	}
	logPath := b.Path(store.DirState, g.Ref+".log")
	var log []byte
	for deadline := time.Now().Add(30 * time.Second); ; {
		log, _ = os.ReadFile(logPath)
		if strings.Contains(string(log), "write failed after") && strings.Contains(string(log), "reached its disk bound") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the box's log does not say its write failed and it reached its bound: %q", log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(string(log), "No space left on device") {
		t.Fatalf("the box's write past its bound did not fail for want of room: %q", log)
	}
	for _, w := range []string{"boxsnap: the box reached its disk bound of 32.0 MiB (its files hold ", "it runs on, but its writes past the bound fail",
		"its files are as they were written", "Delete some of them to make room, or raise the disk bound in its template and reset the box."} {
		if !strings.Contains(string(log), w) {
			t.Fatalf("the box's log does not say %q: %q", w, log)
		}
	}
	used, err := b.DiskUse(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the box's files hold %d bytes on disk at the bound (bound %d)", used, bound)
	if used > bound {
		t.Fatalf("the box's files hold %d bytes on disk, past its %d bound", used, bound)
	}
	// The host's file system counts its own blocks for the file too (its
	// extent tree): a few KiB.
	if img := allocated(t, b.ImageFile(g.Ref)); img > bound+64<<10 {
		t.Fatalf("the box's image holds %d bytes on the host, past its %d bound", img, bound)
	}
	if used < bound/2 {
		t.Fatalf("the box's writes failed at %d bytes, well before its %d bound", used, bound)
	}
	if !st.Running || !st.DiskStop.Full || st.DiskStop.BoundBytes != bound || st.DiskStop.UsedBytes > bound {
		t.Fatalf("the box's status is running=%v %+v, want it running, full, at its bound of %d", st.Running, *st.DiskStop, bound)
	}
	if e.read(t, "before.txt") != "written before the box ran" {
		t.Fatal("a file written before the box ran was lost")
	}
	taken, _ := e.take(t)
	m, err := b.Manifest(taken.Ref)
	if err != nil {
		t.Fatal(err)
	}
	if m.Bytes < bound/2 {
		t.Fatalf("the take at the bound holds %d bytes, want the box's files", m.Bytes)
	}
	for _, id := range []string{before.Ref, taken.Ref} {
		if h, ok := e.held(t, id); !ok || h.Incomplete {
			t.Fatalf("snapshot %s is not held whole after the box reached its bound: %+v", id, h)
		}
	}
	// Room made, the words go, and the box runs on.
	files, _ := filepath.Glob(filepath.Join(dir, "f*"))
	for _, f := range files {
		_ = os.Remove(f)
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		st, err = b.Status(t.Context(), g)
		if err != nil {
			t.Fatal(err)
		}
		if st.DiskStop == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("with room made the status still says %+v", *st.DiskStop)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !st.Running {
		t.Fatal("the box stopped, though nothing needed stopping")
	}
}

// loopOrSkip skips a test of boxes with a file system of their own where
// loop mounts are not possible, saying why.
func loopOrSkip(t *testing.T) {
	t.Helper()
	if why, _ := ProbeLoop(t.TempDir()); why != "" {
		skipOrFailInCI(t, "a box cannot be a file system of its own here: "+why)
	}
}

// skipOrFailInCI skips a test this host cannot run, and fails it under
// CI=true, where the host is made to run every test.
func skipOrFailInCI(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// TestBoxDiskBoundedByTheWatch: where a box has no file system of its own
// (the default, without Config.DiskImages), a box with a 32 MiB disk bound whose
// command writes until it fails stops at about its bound; its status and its log say, in
// words, that it reached its bound; its files are as it left them, and a
// take after works with nothing in the store lost.
func TestBoxDiskBoundedByTheWatch(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a box's process runs as the box's user only as root")
	}
	root := t.TempDir()
	if err := process.Passable(root, "/"); err != nil {
		t.Fatal(err)
	}
	b, err := New(Config{Root: root, Install: "in-test", NoSync: true, StopTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	unmountAtEnd(t, b)
	const bound = 32 << 20
	// 1 MiB files, one after another, until a write fails or the box is
	// stopped; then it waits, as a box that keeps running would.
	cmd := `i=0; while dd if=/dev/urandom of=f$i bs=64k count=16 2>/dev/null; do i=$((i+1)); done; echo "write failed after $i files"; sleep 60`
	g, err := b.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxdisk", Kind: "linux"}, Command: cmd,
		Limits: providers.BoxLimits{DiskBytes: bound}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop(context.Background(), g) })
	dir := b.BoxDir(g)
	if b.HasImage(g.Ref) || disks.IsMounted(dir) {
		t.Fatal("without Config.DiskImages the box got a file system of its own")
	}
	e := env{b: b, g: g, dir: dir, ctx: t.Context()}
	e.write(t, "before.txt", "written before the box ran")
	_, before := e.take(t)
	if err := b.Start(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	var st providers.GuestStatus
	for {
		st, err = b.Status(t.Context(), g)
		if err != nil {
			t.Fatal(err)
		}
		if !st.Running && st.DiskStop != nil {
			break
		}
		if time.Now().After(deadline) {
			used, _ := b.DiskUse(t.Context(), dir)
			t.Fatalf("the box still runs after 60 s, holding %d bytes on disk", used)
		}
		time.Sleep(50 * time.Millisecond)
	}
	used, err := b.DiskUse(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the box stopped holding %d bytes on disk (bound %d)", used, bound)
	// A burst between two measures passes the bound by what it writes in
	// that time: a few MiB on a quiet host, 15 MiB seen with the host's
	// cores busy. Twice the bound is far past it.
	if used > 2*bound {
		t.Fatalf("the box holds %d bytes on disk, far past its %d bound", used, bound)
	}
	if used < bound-4<<20 {
		t.Fatalf("the box was stopped at %d bytes, well before its %d bound", used, bound)
	}
	if st.DiskStop.BoundBytes != bound || st.DiskStop.UsedBytes <= bound {
		t.Fatalf("the box's status says it stopped at %+v, want its bound of %d and more used", *st.DiskStop, bound)
	}
	log, _ := os.ReadFile(b.Path(store.DirState, g.Ref+".log"))
	if !strings.Contains(string(log), "stopped at the disk bound: bound=33554432 bytes") {
		t.Fatalf("the box's log does not say it reached its bound: %q", log)
	}
	if e.read(t, "before.txt") != "written before the box ran" {
		t.Fatal("a file written before the box ran was lost")
	}
	taken, _ := e.take(t)
	m, err := b.Manifest(taken.Ref)
	if err != nil {
		t.Fatal(err)
	}
	if m.Bytes < bound-4<<20 {
		t.Fatalf("the take after the bound holds %d bytes, want the box's files (about %d)", m.Bytes, bound)
	}
	for _, id := range []string{before.Ref, taken.Ref} {
		if h, ok := e.held(t, id); !ok || h.Incomplete {
			t.Fatalf("snapshot %s is not held whole after the box reached its bound: %+v", id, h)
		}
	}
	// A start, with room made, clears the words.
	files, _ := filepath.Glob(filepath.Join(dir, "f*"))
	for _, f := range files {
		_ = os.Remove(f)
	}
	if err := b.Stop(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	if err := b.Start(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	if st, _ := b.Status(t.Context(), g); st.DiskStop != nil {
		t.Fatalf("after a start the status still says it stopped at %+v", *st.DiskStop)
	}
}
