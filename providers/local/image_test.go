package local

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/disks"
	"github.com/boxsnap/boxsnap/providers/local/process"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// imageEnv is a box with a disk bound of bound bytes, a file system of its
// own.
func imageEnv(t *testing.T, bound int64) env {
	t.Helper()
	loopOrSkip(t)
	b, err := New(Config{Root: t.TempDir(), Install: "in-test", NoSync: true, StopTimeout: 2 * time.Second, DiskImages: true})
	if err != nil {
		t.Fatal(err)
	}
	unmountAtEnd(t, b)
	g, err := b.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: "bx" + store.RandomSuffix()[:12], Kind: "linux"},
		Limits: providers.BoxLimits{DiskBytes: bound}})
	if err != nil {
		t.Fatal(err)
	}
	return env{b: b, g: g, dir: b.BoxDir(g), ctx: t.Context()}
}

// mountsAt counts the file systems mounted on dir.
func mountsAt(t *testing.T, dir string) int {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 && process.UnescapeMount(f[4]) == dir {
			n++
		}
	}
	return n
}

// fillsAt writes into dir until a write fails, and checks it fails for
// want of room (ENOSPC) with what dir holds within bound.
func fillsAt(t *testing.T, b *Backend, dir string, bound int64) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte{0xa5}, 1<<20)
	var werr error
	for i := int64(0); i < 2*bound>>20 && werr == nil; i++ {
		_, werr = f.Write(chunk)
	}
	if werr == nil {
		werr = f.Sync()
	}
	f.Close()
	if !errors.Is(werr, syscall.ENOSPC) {
		t.Fatalf("writing twice the bound into %s answered %v, want no space left on device", dir, werr)
	}
	used, err := b.DiskUse(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if used > bound {
		t.Fatalf("%s holds %d bytes on disk, past its %d bound", dir, used, bound)
	}
	if err := os.Remove(filepath.Join(dir, "filler")); err != nil {
		t.Fatal(err)
	}
}

// TestAForkKeepsItsDiskBound: a fork of a box with a 32 MiB disk bound is a
// file system of its own of that size, holding the snapshot's files, and a
// write past its bound fails; nothing of the fork's making is left beside.
func TestAForkKeepsItsDiskBound(t *testing.T) {
	const bound = 32 << 20
	e := imageEnv(t, bound)
	e.write(t, "kept.txt", "from the source")
	_, ref := e.take(t)
	g, err := e.b.ForkSnapshot(e.ctx, ref, providers.BoxIdentity{ID: "bxfork", Kind: "linux"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := e.b.BoxDir(g)
	if mountsAt(t, dir) != 1 {
		t.Fatalf("the fork's folder has %d file systems mounted on it, want its own", mountsAt(t, dir))
	}
	if fi, err := os.Stat(e.b.ImageFile(g.Ref)); err != nil || fi.Size() != bound {
		t.Fatalf("the fork's image is %v (%v), want %d bytes", fi, err, bound)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "kept.txt")); string(got) != "from the source" {
		t.Fatalf("the fork holds %q", got)
	}
	fillsAt(t, e.b, dir, bound)
	for _, d := range []string{store.DirBoxes, disks.DirDisks} {
		left, _ := filepath.Glob(e.b.Path(d, ".fork-*"))
		if len(left) != 0 {
			t.Fatalf("the fork left %v", left)
		}
	}
}

// TestAResetKeepsTheBoundAndTakesTheTemplatesNewOne: a reset makes the box a
// fresh file system of its template's bound (a new bound when the template
// gives one), empty of its old files, and a write past it fails; nothing of
// the reset's making is left beside.
func TestAResetKeepsTheBoundAndTakesTheTemplatesNewOne(t *testing.T) {
	e := imageEnv(t, 32<<20)
	e.write(t, "old.txt", "before the reset")
	const grown = 48 << 20
	if err := e.b.ResetGuest(e.ctx, e.g, providers.BoxSpec{Limits: providers.BoxLimits{DiskBytes: grown}}); err != nil {
		t.Fatal(err)
	}
	if mountsAt(t, e.dir) != 1 {
		t.Fatalf("the reset box's folder has %d file systems mounted on it, want its own", mountsAt(t, e.dir))
	}
	if fi, err := os.Stat(e.b.ImageFile(e.g.Ref)); err != nil || fi.Size() != grown {
		t.Fatalf("the reset box's image is %v (%v), want %d bytes", fi, err, grown)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "old.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the reset box still holds its old file: %v", err)
	}
	if readResetVersion(e.dir) != IdentityResetVersion {
		t.Fatal("the reset box has no identity marker")
	}
	fillsAt(t, e.b, e.dir, grown)
	for _, d := range []string{store.DirBoxes, disks.DirDisks} {
		left, _ := filepath.Glob(e.b.Path(d, ".reset-*"))
		if len(left) != 0 {
			t.Fatalf("the reset left %v", left)
		}
	}
}

// TestARestoreOrForkPastTheBoundIsRefusedBeforeAnythingIsWritten: a snapshot
// whose files hold more than the box's disk bound leaves for them is
// refused, in words, by a restore (at its stop, and at its rollback) and
// by a fork, with nothing written; one that fits restores, and a write
// past the bound after it fails.
func TestARestoreOrForkPastTheBoundIsRefusedBeforeAnythingIsWritten(t *testing.T) {
	e := imageEnv(t, 64<<20)
	e.write(t, "big", strings.Repeat("x", 40<<20))
	_, big := e.take(t)
	const small = 32 << 20
	if err := e.b.ResetGuest(e.ctx, e.g, providers.BoxSpec{Limits: providers.BoxLimits{DiskBytes: small}}); err != nil {
		t.Fatal(err)
	}
	e.write(t, "now.txt", "after the reset")
	_, fits := e.take(t)
	refused := func(what string, err error) {
		t.Helper()
		words := []string{"The snapshot's files hold 40.0 MiB, more than the box's disk bound leaves for its files (",
			"nothing was written. Raise the disk bound in its template and reset the box, or choose a smaller snapshot."}
		var r *providers.RefusedError
		if !errors.As(err, &r) {
			t.Fatalf("%s of a snapshot past the bound answered %v, want a refusal", what, err)
		}
		for _, w := range words {
			if !strings.Contains(err.Error(), w) {
				t.Fatalf("%s's refusal %q does not say %q", what, err, w)
			}
		}
	}
	_, err := e.b.RestoreSnapshot(e.ctx, e.g, big, providers.StepStop, nil)
	refused("a restore's stop", err)
	refused("a restore's rollback", e.restore(t, big))
	if e.read(t, "now.txt") != "after the reset" {
		t.Fatal("a refused restore changed the box's files")
	}
	if _, err := os.Stat(filepath.Join(e.dir, "big")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused restore wrote the big file: %v", err)
	}
	_, err = e.b.ForkSnapshot(e.ctx, big, providers.BoxIdentity{ID: "bxtoobig", Kind: "linux"}, nil)
	refused("a fork", err)
	if _, err := os.Lstat(e.b.BoxDir(providers.Guest{Ref: "bxtoobig"})); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused fork left a box folder: %v", err)
	}
	if left, _ := os.ReadDir(e.b.Path(disks.DirDisks)); len(left) != 3 { // the box's image, the folder it is mounted on and the disks' lock
		t.Fatalf("a refused fork left %d files in %s", len(left), disks.DirDisks)
	}

	e.write(t, "scratch", "written after the take")
	if err := e.restore(t, fits); err != nil {
		t.Fatalf("a restore that fits: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "scratch")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the restore did not bring the box back to its snapshot")
	}
	fillsAt(t, e.b, e.dir, small)
}

// TestBoxsnapsStartMountsAnUnmountedBoxAgain: after a host's restart a
// box's image is not mounted; boxsnap's start (RestartRunning, and every
// boxsnap process on the data folder at once) mounts it once, with its
// files; a folder holding files while its image is unmounted is never
// mounted over.
func TestBoxsnapsStartMountsAnUnmountedBoxAgain(t *testing.T) {
	e := imageEnv(t, 32<<20)
	e.write(t, "kept.txt", "across the restart")
	if err := disks.Unmount(e.dir); err != nil {
		t.Fatal(err)
	}
	if mountsAt(t, e.dir) != 0 {
		t.Fatal("the box's folder is still mounted")
	}
	others := make([]*Backend, 3)
	for i := range others {
		b, err := New(Config{Root: e.b.Root(), Install: "in-test", NoSync: true, DiskImages: true})
		if err != nil {
			t.Fatal(err)
		}
		others[i] = b
	}
	var wg sync.WaitGroup
	for _, b := range append(others, e.b) {
		wg.Go(func() {
			if _, err := b.RestartRunning(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := mountsAt(t, e.dir); n != 1 {
		t.Fatalf("after four boxsnap starts at once the box's folder has %d file systems mounted on it, want 1", n)
	}
	if e.read(t, "kept.txt") != "across the restart" {
		t.Fatal("the box's file is not there after the mount")
	}

	if err := disks.Unmount(e.dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.dir, "stray"), []byte("written while unmounted"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := e.b.Status(e.ctx, e.g); err == nil || !strings.Contains(err.Error(), "a mount would hide them") {
		t.Fatalf("a box whose unmounted folder holds files answered %v", err)
	}
	if mountsAt(t, e.dir) != 0 {
		t.Fatal("a folder holding files was mounted over")
	}
}

// TestReleasingABoxLeavesNoMountAndNoImage: a released box leaves no mount,
// no image and no folder.
func TestReleasingABoxLeavesNoMountAndNoImage(t *testing.T) {
	e := imageEnv(t, 32<<20)
	e.write(t, "f", "x")
	img := e.b.ImageFile(e.g.Ref)
	if err := e.b.Release(e.ctx, e.g); err != nil {
		t.Fatal(err)
	}
	if n := mountsAt(t, e.dir); n != 0 {
		t.Fatalf("the released box's folder still has %d file systems mounted on it", n)
	}
	for _, p := range []string{img, e.dir} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the released box left %s: %v", p, err)
		}
	}
}

// TestABoxMadeAsAPlainFolderGetsAFileSystemOfItsOwnAtItsReset: a box made
// before boxes had file systems of their own (a plain folder) stays one,
// with its files, when boxsnap starts again where loop mounts work; its
// reset makes it a file system of its own of its bound's size.
func TestABoxMadeAsAPlainFolderGetsAFileSystemOfItsOwnAtItsReset(t *testing.T) {
	loopOrSkip(t)
	root := t.TempDir()
	old, err := New(Config{Root: root, Install: "in-test", NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	unmountAtEnd(t, old)
	const bound = 32 << 20
	g, err := old.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxplain", Kind: "linux"}, Limits: providers.BoxLimits{DiskBytes: bound}})
	if err != nil {
		t.Fatal(err)
	}
	dir := old.BoxDir(g)
	if err := os.WriteFile(filepath.Join(dir, "kept.txt"), []byte("in a plain folder"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := New(Config{Root: root, Install: "in-test", NoSync: true, DiskImages: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.RestartRunning(t.Context()); err != nil {
		t.Fatal(err)
	}
	if disks.IsMounted(dir) || b.HasImage(g.Ref) {
		t.Fatal("a box made as a plain folder got a file system at boxsnap's start")
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "kept.txt")); string(got) != "in a plain folder" {
		t.Fatalf("the plain folder's file holds %q", got)
	}
	if err := b.ResetGuest(t.Context(), g, providers.BoxSpec{}); err != nil {
		t.Fatal(err)
	}
	if mountsAt(t, dir) != 1 {
		t.Fatal("the reset box is not a file system of its own")
	}
	if fi, err := os.Stat(b.ImageFile(g.Ref)); err != nil || fi.Size() != bound {
		t.Fatalf("the reset box's image is %v (%v), want %d bytes", fi, err, bound)
	}
	fillsAt(t, b, dir, bound)
	if left, _ := filepath.Glob(b.Path(store.DirBoxes, ".reset-*")); len(left) != 0 {
		t.Fatalf("the reset left %v", left)
	}
}
