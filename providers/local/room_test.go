package local

import (
	"bytes"
	"crypto/rand"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/diskimage"
	"github.com/boxsnap/boxsnap/providers/local/disks"
	"github.com/boxsnap/boxsnap/providers/local/process"
)

// writeUntilFull writes 1 MiB chunks into files named prefix0, prefix1, …
// (16 MiB each) in dir until a write fails, and answers that failure and
// what was written. Each failure for want of room while the box's room is
// still held (a write faster than the watch gives room), or just after the
// last of it was given, waits for the watch and goes on; outrun counts them.
// One while the host refuses the room, or at the box's bound, ends it.
func writeUntilFull(t *testing.T, b *Backend, dir, prefix string, chunk []byte) (werr error, written int64, outrun int) {
	t.Helper()
	fsd := diskimage.MountOf(dir)
	box := filepath.Base(dir)
	for i := 0; ; i++ {
		f, err := os.Create(filepath.Join(dir, prefix+strconv.Itoa(i)))
		if err != nil {
			return err, written, outrun
		}
		for j := 0; j < 16; j++ {
			_, err = f.Write(chunk)
			room := func() bool {
				var st unix.Statfs_t
				return unix.Statfs(dir, &st) == nil && int64(st.Bavail)*int64(st.Bsize) > 2*int64(len(chunk))
			}
			if errors.Is(err, syscall.ENOSPC) && diskimage.Held(fsd) == 0 {
				// The watch may have given the last of the room while
				// this write ran, which outran it: once written back
				// (syncfs) the room shows. Past that, a file system
				// without room is the box at its bound.
				_ = unix.Syncfs(int(f.Fd()))
				if room() && outrun < 100 {
					outrun++
					t.Logf("a write at %d MiB met a full file system while the watch gave the last room", written>>20)
					j--
					continue
				}
			}
			if errors.Is(err, syscall.ENOSPC) && diskimage.Held(fsd) > 0 {
				// Not until the room is no longer held: the blocks the
				// watch gives back show as free only once ext4 commits
				// its journal (every 5 s at most), after the last of the
				// room is given too.
				for deadline := time.Now().Add(10 * time.Second); !room() && !b.Grow.HostRefused(box) && time.Now().Before(deadline); {
					time.Sleep(10 * time.Millisecond)
				}
				if !room() {
					f.Close()
					return err, written, outrun
				}
				outrun++
				t.Logf("a write at %d MiB met a full file system before the watch gave room", written>>20)
				j--
				continue
			}
			if err != nil {
				f.Close()
				return err, written, outrun
			}
			written += int64(len(chunk))
		}
		if err := f.Close(); err != nil {
			return err, written, outrun
		}
	}
}

// TestBoxImageGrows: a box with a 512 MiB disk bound holds on the host at
// first much less than its bound; written past that, its room grows as it
// fills, up to the bound, where a write fails (no space left on device);
// the files written before are intact, and the image never holds more than
// the bound on the host.
func TestBoxImageGrows(t *testing.T) {
	const bound = 512 << 20
	e := imageEnv(t, bound)
	img := e.b.ImageFile(e.g.Ref)
	first := allocated(t, img)
	t.Logf("a new box with a %d MiB bound holds %d MiB on the host", bound>>20, first>>20)
	if first > bound/2 {
		t.Fatalf("a new box with a %d bound holds %d bytes on the host, not held back", bound, first)
	}
	early := make([]byte, 1<<20)
	_, _ = rand.Read(early)
	if err := os.WriteFile(filepath.Join(e.dir, "early"), early, 0o644); err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte{0x5a}, 1<<20)
	t0 := time.Now()
	werr, written, outrun := writeUntilFull(t, e.b, e.dir, "f", chunk)
	t.Logf("wrote %d MiB in %v before %v; the writer outran the growth %d times", written>>20, time.Since(t0).Round(time.Millisecond), werr, outrun)
	if !errors.Is(werr, syscall.ENOSPC) {
		t.Fatalf("writing until a write fails ended with %v, want no space left on device", werr)
	}
	if held := diskimage.Held(diskimage.MountOf(e.dir)); held != 0 {
		t.Fatalf("the box's writes failed with %d bytes of its room still held: it did not grow to its bound", held)
	}
	used, err := e.b.DiskUse(e.ctx, e.dir)
	if err != nil {
		t.Fatal(err)
	}
	if used > bound || used < bound*8/10 {
		t.Fatalf("the box's files hold %d bytes at its full bound of %d, want most of it and no more", used, bound)
	}
	if got, _ := os.ReadFile(filepath.Join(e.dir, "early")); !bytes.Equal(got, early) {
		t.Fatal("the file written before the growth changed")
	}
	if a := allocated(t, img); a > bound+1<<20 {
		t.Fatalf("the image holds %d bytes on the host, past its %d bound", a, bound)
	}
	if st, err := e.b.Status(e.ctx, e.g); err != nil || st.DiskStop == nil || !st.DiskStop.Full || st.DiskStop.BoundBytes != bound {
		t.Fatalf("the box at its bound has status %+v (%v), want it full at its bound", st.DiskStop, err)
	}
}

// TestHostFullKeepsTheBoxWritable: with the store's own disk full, a
// running box whose bound is far from reached keeps its file system
// read-write: a write past the room given to it fails (no space left on
// device), boxsnap's log says why in words, its files are intact, and its status
// says its disk cannot grow because the host is full (not that it reached
// its bound); a new box is refused in words, with
// nothing left; once room is made on the host, the box writes again, and
// its files read back whole from its disk.
func TestHostFullKeepsTheBoxWritable(t *testing.T) {
	loopOrSkip(t)
	host := smallStore(t, 448<<20)
	root := filepath.Join(host, "data")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := process.Passable(root, "/"); err != nil {
		t.Fatal(err)
	}
	lb := &logBuf{}
	b, err := New(Config{Root: root, Install: "in-test", NoSync: true, StopTimeout: 2 * time.Second, DiskImages: true,
		Logger: slog.New(slog.NewTextHandler(lb, nil))})
	if err != nil {
		t.Fatal(err)
	}
	unmountAtEnd(t, b)
	const bound = 1 << 30 // more than the host holds
	g, err := b.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxhostfull", Kind: "linux"}, Command: "sleep 600",
		Limits: providers.BoxLimits{DiskBytes: bound}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop(t.Context(), g) })
	dir := b.BoxDir(g)
	kept := make([]byte, 4<<20)
	_, _ = rand.Read(kept)
	if err := os.WriteFile(filepath.Join(dir, "kept"), kept, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.Start(t.Context(), g); err != nil {
		t.Fatal(err)
	}

	// The host's disk filled by another writer.
	filler, err := os.Create(filepath.Join(host, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte{0xa5}, 1<<20)
	for {
		if _, err := filler.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	_ = filler.Sync()
	filler.Close()

	werr, written, _ := writeUntilFull(t, b, dir, "more", chunk)
	if !errors.Is(werr, syscall.ENOSPC) {
		t.Fatalf("the box's writes on a full host ended with %v after %d MiB, want no space left on device", werr, written>>20)
	}
	unix.Sync()
	var s unix.Statfs_t
	if err := unix.Statfs(dir, &s); err != nil || s.Flags&unix.ST_RDONLY != 0 {
		t.Fatalf("on a full host the box's file system is read-only (%v)", err)
	}
	if held := diskimage.Held(diskimage.MountOf(dir)); held == 0 {
		t.Fatal("the box's room was all given on a host with no room for it")
	}
	// The box's log is on the full host too: boxsnap's says it.
	var log strings.Builder
	for deadline := time.Now().Add(30 * time.Second); ; {
		log.WriteString(lb.take())
		if strings.Contains(log.String(), "the host's disk is full: a box's disk cannot grow toward its bound, and its writes fail (no space left on device) until room is made on the host; its files are kept\" box=bxhostfull") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("boxsnap's log does not say the host's disk is full: %q", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	st, err := b.Status(t.Context(), g)
	if err != nil {
		t.Fatal(err)
	}
	if d := st.DiskStop; !st.Running || d == nil || !d.Full || !d.HostFull || d.Files != 0 || d.BoundBytes != bound {
		t.Fatalf("on a full host the box's status is running=%v %+v, want it running, its disk unable to grow because the host is full", st.Running, st.DiskStop)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "kept")); !bytes.Equal(got, kept) {
		t.Fatal("a file written before the host filled changed")
	}

	// A new box, whose image takes room at once, is refused in words, with
	// nothing left, on a host with a little room.
	if err := os.Truncate(filepath.Join(host, "filler"), fillerSize(t, host)-24<<20); err != nil {
		t.Fatal(err)
	}
	_, err = b.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxnoroom", Kind: "linux"}, Limits: providers.BoxLimits{DiskBytes: bound}})
	var refused *providers.RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "The host's disk has no room for the box's disk image, which takes ") ||
		!strings.Contains(err.Error(), "nothing was made. Make room on the host, or give the box's template a smaller disk bound.") {
		t.Fatalf("a new box on a full host answered %v, want a refusal in words", err)
	}
	for _, p := range []string{b.BoxDir(providers.Guest{Ref: "bxnoroom"}), b.ImageFile("bxnoroom"), diskimage.FSDirOf(b.ImageFile("bxnoroom"))} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a refused box left %s: %v", p, err)
		}
	}

	// Room made on the host: the box writes again.
	if err := os.Remove(filepath.Join(host, "filler")); err != nil {
		t.Fatal(err)
	}
	// Each write may meet a full file system before the watch gives the
	// box room (its room ahead was what the host had left): it is written
	// again once the watch has.
	for i := 0; i < 32; i++ {
		p := filepath.Join(dir, "again"+strconv.Itoa(i))
		for deadline := time.Now().Add(30 * time.Second); ; {
			err := os.WriteFile(p, chunk, 0o644)
			if err == nil {
				break
			}
			if !errors.Is(err, syscall.ENOSPC) || time.Now().After(deadline) {
				t.Fatalf("with room made on the host the box's write %d answers %v", i, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		st, err := b.Status(t.Context(), g)
		if err != nil {
			t.Fatal(err)
		}
		if st.DiskStop == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("with room made on the host the box's status still says %+v", *st.DiskStop)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Its files read back whole from its disk, not from memory: unmounted
	// and mounted again.
	if err := b.Stop(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	if err := disks.Unmount(dir); err != nil {
		t.Fatal(err)
	}
	if err := b.EnsureMounted(g.Ref); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "kept")); !bytes.Equal(got, kept) {
		t.Fatal("a file written before the host filled is not whole on the box's disk")
	}
}

// fillerSize is the size of the file filler in dir.
func fillerSize(t *testing.T, dir string) int64 {
	t.Helper()
	fi, err := os.Stat(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
