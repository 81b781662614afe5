package local

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
)

// syncSeen is what a test's synced hook saw: each folder synced, and
// whether at that moment the box's file held what it should.
type syncSeen struct {
	mu   sync.Mutex
	dirs []string
	held []bool
}

func (s *syncSeen) hook(file, want string) func(dir string) {
	return func(dir string) {
		data, _ := os.ReadFile(filepath.Join(dir, file))
		s.mu.Lock()
		defer s.mu.Unlock()
		s.dirs = append(s.dirs, dir)
		s.held = append(s.held, string(data) == want)
	}
}

// syncedRestore takes a snapshot of e's box with a file in it, changes the
// file, and restores the snapshot's rollback step with syncs on (this
// test is of the sync NoSync skips), recording each sync.
func syncedRestore(t *testing.T, e env) (*syncSeen, providers.SnapshotRef) {
	t.Helper()
	e.b.noSync = false
	e.write(t, "notes/plan.txt", "as taken")
	_, ref := e.take(t)
	e.write(t, "notes/plan.txt", "changed after the take")
	seen := &syncSeen{}
	e.b.hooks.synced = seen.hook("notes/plan.txt", "as taken")
	if _, err := e.b.RestoreSnapshot(e.ctx, e.g, ref, providers.StepRollback, nil); err != nil {
		t.Fatalf("restore: %v", err)
	}
	return seen, ref
}

// TestARestoreAndAForkAreOnDiskBeforeTheySayDone: "restored" survives a
// power cut as a take's "ready" does, so the restore's rollback step and
// the fork sync the box's files after they are written and before the step
// answers done.
func TestARestoreAndAForkAreOnDiskBeforeTheySayDone(t *testing.T) {
	t.Parallel()
	e := setup(t)
	restored, ref := syncedRestore(t, e)
	if len(restored.dirs) != 1 || restored.dirs[0] != e.dir {
		t.Fatalf("the restore said done after syncing %q, not once the box's folder %s", restored.dirs, e.dir)
	}
	if !restored.held[0] {
		t.Fatal("the restore synced the box's folder before it wrote the snapshot's files")
	}

	var forked syncSeen
	e.b.hooks.synced = forked.hook("notes/plan.txt", "as taken")
	fg, err := e.b.ForkSnapshot(e.ctx, ref, providers.BoxIdentity{ID: "bxdurable", Kind: "linux"}, nil)
	if err != nil {
		t.Fatalf("fork: %v", err)
	}
	t.Cleanup(func() { _ = e.b.Stop(t.Context(), fg) })
	fdir := e.b.BoxDir(fg)
	if len(forked.dirs) != 1 || forked.dirs[0] != fdir {
		t.Fatalf("the fork said done after syncing %q, not once its folder %s", forked.dirs, fdir)
	}
	if !forked.held[0] {
		t.Fatal("the fork synced its folder before its files were there under its own name")
	}
}

// TestARestoreOnItsOwnDiskSyncsThatDiskAlone: a box on a disk image of its
// own is synced by one syncfs of its own file system, which flushes that
// box alone, never the data folder's with every other box's writes.
func TestARestoreOnItsOwnDiskSyncsThatDiskAlone(t *testing.T) {
	e := imageEnv(t, 64<<20)
	seen, _ := syncedRestore(t, e)
	if len(seen.dirs) != 1 || seen.dirs[0] != e.dir || !seen.held[0] {
		t.Fatalf("the restore synced %q (the snapshot's files there: %v); want once the box's folder %s, after its files", seen.dirs, seen.held, e.dir)
	}
	var box, data unix.Statfs_t
	if err := unix.Statfs(seen.dirs[0], &box); err != nil {
		t.Fatal(err)
	}
	if err := unix.Statfs(e.b.Root(), &data); err != nil {
		t.Fatal(err)
	}
	if box.Fsid == data.Fsid {
		t.Fatal("the box's folder is on the data folder's file system: its disk image is not mounted, and nothing here is tested")
	}
}

// TestAResetIsOnDiskBeforeItSaysDone: a reset's fresh box survives a
// power cut as a restore does: its files are synced once, after they are
// written and before any name leads to them (the swap), and the reset
// answers after.
func TestAResetIsOnDiskBeforeItSaysDone(t *testing.T) {
	t.Parallel()
	tmpl := t.TempDir()
	if err := os.MkdirAll(filepath.Join(tmpl, "devbox", "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmpl, "devbox", "notes", "plan.txt"), []byte("from the template"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := resetKillBackend(t, t.TempDir(), tmpl, false)
	g, err := b.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxresetsynced", Kind: "linux"}})
	if err != nil {
		t.Fatal(err)
	}
	e := env{b: b, g: g, dir: b.BoxDir(g), ctx: t.Context()}
	e.write(t, "notes/plan.txt", "before the reset")
	var seen syncSeen
	b.hooks.synced = seen.hook("notes/plan.txt", "from the template")
	var swapped bool
	b.hooks.resetStep = func(step string) {
		if step == "swapped" {
			seen.mu.Lock()
			swapped = len(seen.dirs) == 1
			seen.mu.Unlock()
		}
	}
	if err := b.ResetGuest(e.ctx, g, providers.BoxSpec{Template: "devbox"}); err != nil {
		t.Fatal(err)
	}
	if len(seen.dirs) != 1 || !seen.held[0] {
		t.Fatalf("the reset said done after syncing %q (its fresh files there: %v), not once its fresh box", seen.dirs, seen.held)
	}
	if !swapped {
		t.Fatal("the reset swapped its fresh box in before it put its files on disk")
	}
	if got := e.read(t, "notes/plan.txt"); got != "from the template" {
		t.Fatalf("the reset box holds %q", got)
	}
}
