package diskimage

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestTheLastRoomGivenIsWritableAtOnce: a box writing flat out while the
// growth watch gives it the last of its held room meets no "no space left
// on device" until its bound: once no room is held, a write that fails for
// want of room finds the box's file system full even after its journal is
// committed (syncfs), and the box's files then hold most of its bound. A
// write that outruns the watch while room is still held waits for the
// watch and goes on, as it does in a box.
func TestTheLastRoomGivenIsWritableAtOnce(t *testing.T) {
	const bound = 512 << 20
	disks, img, dir := freshBox(t, bound)
	var g Grower
	g.Start(disks, slog.New(slog.DiscardHandler))
	t.Cleanup(g.Stop)
	fsd := FSDirOf(img)
	free := func() int64 {
		var s unix.Statfs_t
		if err := unix.Statfs(dir, &s); err != nil {
			t.Fatal(err)
		}
		return int64(s.Bavail) * int64(s.Bsize)
	}

	chunk := bytes.Repeat([]byte{0x5a}, 1<<20)
	var written, afterLast int64
	outrun := 0
	for i := 0; ; i++ {
		f, err := os.Create(filepath.Join(dir, "f"+strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 16; j++ {
			held := Held(fsd)
			_, err = f.Write(chunk)
			if err == nil {
				written += int64(len(chunk))
				if held == 0 {
					afterLast += int64(len(chunk))
				}
				continue
			}
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			if held > 0 {
				// Outran the watch while room was still held.
				for deadline := time.Now().Add(10 * time.Second); free() < 2*int64(len(chunk)) && Held(fsd) > 0; {
					if time.Now().After(deadline) {
						t.Fatalf("a write at %d MiB met a full file system with %d MiB held, and the watch gave no room in 10 s", written>>20, Held(fsd)>>20)
					}
					time.Sleep(5 * time.Millisecond)
				}
				outrun++
				j--
				continue
			}
			// No room held before this write: the box is at its bound,
			// unless the room last given was not yet writable.
			_ = unix.Syncfs(int(f.Fd()))
			f.Close()
			if left := free(); left >= 2*int64(len(chunk)) {
				t.Fatalf("a write at %d MiB of a %d MiB bound met no space left on device with no room held, and %d MiB free once the journal was committed: the last room given was not writable at once",
					written>>20, bound>>20, left>>20)
			}
			t.Logf("wrote %d MiB (%d after the last room was given) before no space left on device; outran the watch %d times", written>>20, afterLast>>20, outrun)
			if written < bound*8/10 {
				t.Fatalf("the box met no space left on device at %d MiB of its %d MiB bound", written>>20, bound>>20)
			}
			if afterLast == 0 {
				t.Fatal("the writer wrote nothing after the last room was given: the watch gave it with the box idle, not while it wrote")
			}
			return
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// freshBox is a fresh image of size bytes with its held room, in a folder
// of images of its own, mounted on a box's folder until the test ends.
func freshBox(t *testing.T, size int64) (disks, img, dir string) {
	t.Helper()
	needLoop(t)
	disks = t.TempDir()
	img, dir = filepath.Join(disks, "bx.img"), filepath.Join(t.TempDir(), "box")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Make(t.Context(), img, size); err != nil {
		t.Fatal(err)
	}
	if err := MountFresh(img, dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = Unmount(dir) })
	return disks, img, dir
}

// TestALastGiveCutShortHoldsNothing: a held room whose blocks were all
// freed and committed by the last give, which then ended before removing
// its file (a crash), holds nothing: the next give removes the file and
// gives nothing, without an error, and no room is held after.
func TestALastGiveCutShortHoldsNothing(t *testing.T) {
	_, img, _ := freshBox(t, 256<<20)
	fsd := FSDirOf(img)
	held := Held(fsd)
	if held == 0 {
		t.Fatal("a fresh image holds no room")
	}
	f, err := os.OpenFile(filepath.Join(fsd, fileRoom), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 0, held); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	n, err := giveRoom(fsd, img, 64<<20)
	if err != nil || n != 0 {
		t.Fatalf("a give after a last give cut short gave %d bytes (%v), want none and no error", n, err)
	}
	if h := Held(fsd); h != 0 {
		t.Fatalf("after a last give cut short, %d bytes are still counted as held", h)
	}
}
