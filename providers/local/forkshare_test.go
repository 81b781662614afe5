package local

import (
	"crypto/rand"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/confined"
	"github.com/boxsnap/boxsnap/providers/local/diskimage"
	"github.com/boxsnap/boxsnap/providers/local/disks"
	"github.com/boxsnap/boxsnap/providers/local/overlay"
	"github.com/boxsnap/boxsnap/providers/local/process"
)

// shareEnv is a box with a file system of its own where forks share
// their snapshot's tree, or the test is skipped.
func shareEnv(t *testing.T, bound int64) env {
	t.Helper()
	e := imageEnv(t, bound)
	if why, _ := overlay.Probe(t.TempDir()); why != "" {
		skipOrFailInCI(t, "forks cannot share a tree here: "+why)
	}
	return e
}

// fork forks ref as the box id, or fails the test.
func (e env) fork(t *testing.T, ref providers.SnapshotRef, id string) string {
	t.Helper()
	g, err := e.b.ForkSnapshot(e.ctx, ref, providers.BoxIdentity{ID: id, Kind: "linux"}, nil)
	if err != nil {
		t.Fatalf("fork %s: %v", id, err)
	}
	return e.b.BoxDir(g)
}

// fsTypeAt is the type of the file system mounted on dir last, or "".
func fsTypeAt(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	typ := ""
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || process.UnescapeMount(f[4]) != dir {
			continue
		}
		for i, x := range f {
			if x == "-" && i+1 < len(f) {
				typ = f[i+1]
			}
		}
	}
	return typ
}

// hostRoom is what the files under root take on the host, blocks
// allocated, counted in root's own file system only (an image mounted
// below it is counted as its file, not through its mount), so other
// work on the host does not move it.
func hostRoom(t *testing.T, root string) int64 {
	t.Helper()
	var top syscall.Stat_t
	if err := syscall.Lstat(root, &top); err != nil {
		t.Fatal(err)
	}
	var n int64
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			return nil
		}
		if st.Dev != top.Dev {
			return filepath.SkipDir
		}
		n += st.Blocks * 512
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestForksOfOneSnapshotHoldAboutOneTree: 10 forks of one snapshot hold
// about one copy of its files on the host, not 10: beside the room each
// box's own file system takes however empty (an empty box's), what they
// add is one tree of the snapshot's files, and each fork's box is an
// overlay over it.
func TestForksOfOneSnapshotHoldAboutOneTree(t *testing.T) {
	const bound = 128 << 20
	e := shareEnv(t, bound)
	const tree = 48 << 20
	for i := range 12 {
		data := make([]byte, tree/12)
		_, _ = rand.Read(data)
		e.write(t, filepath.Join("data", string(rune('a'+i))+".bin"), string(data))
	}
	_, ref := e.take(t)
	syscall.Sync()
	before := hostRoom(t, e.b.Root())
	if _, err := e.b.Acquire(e.ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxempty", Kind: "linux"}, Limits: providers.BoxLimits{DiskBytes: bound}}); err != nil {
		t.Fatal(err)
	}
	syscall.Sync()
	empty := hostRoom(t, e.b.Root()) - before
	before += empty
	const n = 10
	var dirs []string
	for i := range n {
		dirs = append(dirs, e.fork(t, ref, "bxfork"+string(rune('a'+i))))
	}
	syscall.Sync()
	added := hostRoom(t, e.b.Root()) - before - n*empty
	t.Logf("an empty box takes %.1f MiB on the host; %d forks of a %.1f MiB snapshot add %.1f MiB beside that", mib(empty), n, mib(tree), mib(added))
	if added > tree*3/2 {
		t.Fatalf("%d forks hold %.1f MiB of files on the host, want about one tree (%.1f MiB), not %d", n, mib(added), mib(tree), n)
	}
	for i, dir := range dirs {
		if typ := fsTypeAt(t, dir); typ != "overlay" {
			t.Fatalf("fork %d's folder is a %q mount, want an overlay over the shared tree", i, typ)
		}
	}
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// TestAForkCannotChangeItsSiblingOrTheSharedTree: what one fork writes,
// removes, renames or changes the mode of is its own: its sibling and
// the shared tree they lie over are as the snapshot was; a link in the
// snapshot stays a link in the shared tree, and the fork's clean-up never
// follows it out of the box.
func TestAForkCannotChangeItsSiblingOrTheSharedTree(t *testing.T) {
	e := shareEnv(t, 64<<20)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, ".netrc"), []byte("machine x password y"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.write(t, "a.txt", "from the source")
	e.write(t, "dir/b.txt", "in a folder")
	e.write(t, "home/alice/.netrc", "secret")
	if err := os.Symlink(outside, filepath.Join(e.dir, "home", "bob")); err != nil {
		t.Fatal(err)
	}
	_, ref := e.take(t)
	a := e.fork(t, ref, "bxforka")
	b := e.fork(t, ref, "bxforkb")
	lower := (&overlay.Lowers{Store: e.b.Store}).Tree(ref.ID)
	want := listing(t, lower)
	if _, err := os.Lstat(filepath.Join(lower, "a.txt")); err != nil {
		t.Fatalf("the forks lie over no shared tree: %v", err)
	}
	sibling := listing(t, b)

	if err := os.WriteFile(filepath.Join(a, "a.txt"), []byte("changed by a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(a, "dir", "b.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(a, "dir"), filepath.Join(a, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(a, "home", "alice"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(a, "new.txt"), []byte("a's own"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := listing(t, b); got != sibling {
		t.Fatalf("a fork's writes changed its sibling:\n%s\nwant\n%s", got, sibling)
	}
	if got := listing(t, lower); got != want {
		t.Fatalf("a fork's writes changed the shared tree:\n%s\nwant\n%s", got, want)
	}
	if fi, err := os.Lstat(filepath.Join(lower, "home", "bob")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the link in the snapshot is %v (%v) in the shared tree, want a link", fi, err)
	}
	if _, err := os.Stat(filepath.Join(outside, ".netrc")); err != nil {
		t.Fatal("a fork's clean-up followed a link in the shared tree out of the box")
	}
	if _, err := os.Lstat(filepath.Join(lower, "home", "alice", ".netrc")); err != nil {
		t.Fatal("the shared tree lost what the snapshot holds: it is the snapshot's, whatever a fork cleans")
	}
	if _, err := os.Lstat(filepath.Join(a, "home", "alice", ".netrc")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("a fork still holds its source's credentials over the shared tree")
	}
	// The fork reaches the shared tree only through its own folder, the
	// confined way: the folder it lies over is not beneath it.
	tr, err := confined.OpenTree(a)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var st unix.Stat_t
	if err := tr.Lstat("home/bob/.netrc", &st); err == nil {
		t.Fatal("a link in the shared tree led out of the box")
	}
}

// TestASharedForkIsMountedAgainAfterARestart: a fork's overlay unmounted
// as boxsnap stops (UnmountIdle), or cut short half unmounted, is mounted
// again by the next boxsnap on the data folder, over the same shared
// tree, with what the fork wrote.
func TestASharedForkIsMountedAgainAfterARestart(t *testing.T) {
	e := shareEnv(t, 64<<20)
	e.write(t, "shared.txt", "from the source")
	_, ref := e.take(t)
	dir := e.fork(t, ref, "bxforka")
	if err := os.WriteFile(filepath.Join(dir, "own.txt"), []byte("the fork's own"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := e.b.Close(e.ctx); err != nil {
		t.Fatal(err)
	}
	disks.UnmountIdle(e.b.Root(), slog.Default())
	if disks.IsMounted(dir) || diskimage.IsMounted(diskimage.FSDirOf(e.b.ImageFile("bxforka"))) {
		t.Fatal("the fork's overlay or its image stayed mounted at the stop")
	}
	check := func(b *Backend) {
		t.Helper()
		b.MountImages()
		if typ := fsTypeAt(t, dir); typ != "overlay" {
			t.Fatalf("after a restart the fork's folder is a %q mount, want its overlay", typ)
		}
		for f, want := range map[string]string{"shared.txt": "from the source", "own.txt": "the fork's own"} {
			if got, err := os.ReadFile(filepath.Join(dir, f)); err != nil || string(got) != want {
				t.Fatalf("after a restart the fork's %s holds %q (%v), want %q", f, got, err, want)
			}
		}
	}
	b2, err := New(Config{Root: e.b.Root(), Install: "in-test", NoSync: true, DiskImages: true})
	if err != nil {
		t.Fatal(err)
	}
	check(b2)
	// Killed between the overlay's unmount and its image's.
	if err := syscall.Unmount(dir, 0); err != nil {
		t.Fatal(err)
	}
	b3, err := New(Config{Root: e.b.Root(), Install: "in-test", NoSync: true, DiskImages: true})
	if err != nil {
		t.Fatal(err)
	}
	check(b3)
}

// TestASharedTreeOutlivesItsSnapshotUntilItsLastForkGoes: the tree forks
// lie over stays while a box names it, through its snapshot's delete and
// a sweep, and a sweep removes it once the last fork is released.
func TestASharedTreeOutlivesItsSnapshotUntilItsLastForkGoes(t *testing.T) {
	e := shareEnv(t, 64<<20)
	e.write(t, "shared.txt", "from the source")
	_, ref := e.take(t)
	a := e.fork(t, ref, "bxforka")
	e.fork(t, ref, "bxforkb")
	lower := (&overlay.Lowers{Store: e.b.Store}).Tree(ref.ID)
	if err := e.b.DeleteSnapshot(e.ctx, ref, nil); err != nil {
		t.Fatal(err)
	}
	sweep := func() {
		t.Helper()
		if _, err := e.b.Sweep(e.ctx); err != nil {
			t.Fatal(err)
		}
	}
	sweep()
	if got, err := os.ReadFile(filepath.Join(a, "shared.txt")); err != nil || string(got) != "from the source" {
		t.Fatalf("after its snapshot's delete a fork reads %q (%v)", got, err)
	}
	for _, id := range []string{"bxforka", "bxforkb"} {
		if _, err := os.Lstat(lower); err != nil {
			t.Fatalf("the shared tree went while box %s lies over it: %v", id, err)
		}
		if err := e.b.Release(e.ctx, e.b.guestOf(id, "linux")); err != nil {
			t.Fatal(err)
		}
		sweep()
	}
	if _, err := os.Lstat(filepath.Dir(lower)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the shared tree stays after its last fork went: %v", err)
	}
}

// TestASharedForkTakesRestoresAndForksByteExact: a fork over a shared
// tree holds the snapshot's files exactly; its take holds what it holds
// exactly; after changes, a restore brings it back to that take exactly;
// and a fork of that take (a fork of a fork) holds the same.
func TestASharedForkTakesRestoresAndForksByteExact(t *testing.T) {
	e := shareEnv(t, 64<<20)
	e.write(t, "a.txt", "from the source")
	e.write(t, "dir/deep/b.txt", "deep")
	if err := os.Chmod(filepath.Join(e.dir, "dir"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(e.dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(e.dir, "empty"), 0o711); err != nil {
		t.Fatal(err)
	}
	_, ref := e.take(t)
	// The identity a fork gets is its own, and writing it changes the
	// time of the box's folder; its mode and owner are the snapshot's.
	withoutIdentity := func(s string) string {
		var keep []string
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, ". ") {
				l, _, _ = strings.Cut(l, " mtime=")
			}
			if !strings.HasPrefix(l, ".boxsnap") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	source := withoutIdentity(listing(t, e.dir))
	fe := e
	fe.g = e.b.guestOf("bxforka", "linux")
	fe.dir = e.fork(t, ref, "bxforka")
	if got := withoutIdentity(listing(t, fe.dir)); got != source {
		t.Fatalf("the fork holds\n%s\nwant the snapshot's\n%s", got, source)
	}
	fe.write(t, "a.txt", "the fork's")
	fe.write(t, "fork.txt", "new in the fork")
	_, fref := fe.take(t)
	taken := listing(t, fe.dir)

	fe.write(t, "a.txt", "changed after the take")
	if err := os.RemoveAll(filepath.Join(fe.dir, "dir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(fe.dir, "empty"), filepath.Join(fe.dir, "renamed")); err != nil {
		t.Fatal(err)
	}
	if err := fe.restore(t, fref); err != nil {
		t.Fatal(err)
	}
	if got := listing(t, fe.dir); got != taken {
		t.Fatalf("the restored fork holds\n%s\nwant its take's\n%s", got, taken)
	}
	second := e.fork(t, fref, "bxforkb")
	if got, want := withoutIdentity(listing(t, second)), withoutIdentity(taken); got != want {
		t.Fatalf("a fork of the fork holds\n%s\nwant\n%s", got, want)
	}
}

// TestASharedForksCostIsWhatItAloneHolds: a fork's status counts what it
// alone holds as its disk, and the shared tree it lies over apart, so
// what it writes is its own cost and the tree is not counted per fork.
func TestASharedForksCostIsWhatItAloneHolds(t *testing.T) {
	e := shareEnv(t, 64<<20)
	const tree = 3 << 20
	e.write(t, "shared.bin", strings.Repeat("s", tree))
	_, ref := e.take(t)
	e.fork(t, ref, "bxforka")
	g := e.b.guestOf("bxforka", "linux")
	size := func() providers.BoxSize {
		t.Helper()
		st, err := e.b.Status(e.ctx, g)
		if err != nil || st.Size == nil {
			t.Fatalf("Status: %+v %v", st, err)
		}
		return *st.Size
	}
	first := size()
	if first.SharedBytes < tree || first.DiskBytes >= tree {
		t.Fatalf("a fresh fork's size is %+v, want its own files (its identity) apart from the %d bytes it shares", first, tree)
	}
	if err := os.WriteFile(filepath.Join(e.b.BoxDir(g), "own.bin"), []byte(strings.Repeat("o", 1<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := size(); got.DiskBytes != first.DiskBytes+1<<20 || got.SharedBytes != first.SharedBytes {
		t.Fatalf("after the fork wrote 1 MiB its size is %+v, want %d bytes of its own and %d shared", got, first.DiskBytes+1<<20, first.SharedBytes)
	}
}

// TestASharedForksJournalTakeEqualsWalkTake: a running fork over a shared
// tree keeps its journal of changes as any box does: after changes to
// files it shares and to its own, a take driven by the journal holds
// exactly what a walk of its folder finds.
func TestASharedForksJournalTakeEqualsWalkTake(t *testing.T) {
	loopOrSkip(t)
	if why, _ := overlay.Probe(t.TempDir()); why != "" {
		skipOrFailInCI(t, "forks cannot share a tree here: "+why)
	}
	seed := journalSeed(t)
	je := setupJournal(t, t.TempDir(), Config{DiskImages: true})
	newChurner(t, seed, je.dir).seedTree()
	_, ref := je.take(t)
	fe := je
	fe.g = je.b.guestOf("bxforka", "linux")
	fe.dir = je.fork(t, ref, "bxforka")
	if typ := fsTypeAt(t, fe.dir); typ != "overlay" {
		t.Fatalf("the fork's folder is a %q mount, want an overlay", typ)
	}
	if err := je.b.Start(je.ctx, fe.g); err != nil {
		t.Fatal(err)
	}
	fe.takeLogged(t)
	c := newChurner(t, seed, fe.dir)
	journaled := 0
	for r := range 8 {
		for i, n := 0, 1+c.rng.IntN(25); i < n; i++ {
			c.step()
		}
		ref, walked, why := fe.takeLogged(t)
		if walked && !strings.Contains(why, "hard link") {
			t.Fatalf("round %d: the fork's take walked its folder: %s", r, why)
		}
		if !walked {
			journaled++
		}
		got, err := je.b.Manifest(ref.ID)
		if err != nil {
			t.Fatal(err)
		}
		// Inodes and change times aside: a folder copied up (as a file in
		// it is first written) gets a new change time with no event of
		// its own, and a folder's entry holds no content to read again.
		if diffs := sameEntries(got, walkTake(t, je.b, fe.dir), false); len(diffs) > 0 {
			t.Fatalf("round %d (seed %d): the fork's journal-driven take differs from a walk in %d paths:\n%s",
				r, seed, len(diffs), strings.Join(diffs[:min(len(diffs), 10)], "\n"))
		}
	}
	if journaled == 0 {
		t.Fatal("no take of the fork was journal-driven")
	}
}
