package fork_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	forks "github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/providers"
)

// TestSweepLeavesAForkAtWork: the local backend's sweep removes what a
// killed fork left under a fork's temporary name, and never a fork at
// work: a sweep asked while a fork is being written under its temporary
// name waits for it, and the fork ends whole, with every file of its
// snapshot, over the snapshot's shared tree where forks share.
func TestSweepLeavesAForkAtWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{})
	_, agent, _ := e.Thread(t, "Fork while sweeping")
	b := e.Box(t, agent, "amber-fox")
	dir := e.Local.BoxDir(providers.Guest{Ref: b.GuestRef})
	// Enough files that writing the fork's shared tree takes a while.
	const files = 3000
	for i := range files {
		write(t, filepath.Join(dir, fmt.Sprintf("f%04d.txt", i)), strings.Repeat("x", 512+i))
	}
	sn := e.TakeReady(t, agent, "amber-fox", "one")
	op, err := e.Forks.Fork(ctx, agent, forks.ForkRequest{Box: "amber-fox", Snapshot: sn.ID, Name: "fix"})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; {
		if m, _ := filepath.Glob(filepath.Join(e.Local.Root(), "boxes", ".fork-*")); len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no fork began within a minute")
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := e.Local.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	done := e.Wait(t, op)
	if done.State != snapshots.OpDone {
		t.Fatalf("the fork a sweep ran beside ended %s: %s", done.State, coretest.Deref(done.Error))
	}
	fb, err := e.Core.Box(ctx, agent, "fix")
	if err != nil {
		t.Fatal(err)
	}
	fdir := e.Local.BoxDir(providers.Guest{Ref: fb.GuestRef})
	// Where forks share, the fork lies over the shared tree as it began:
	// a fork whose temporary folder went under it would have copied.
	if exact, _, _ := e.Local.DiskBounding(); exact && mountType(t, fdir) != "overlay" {
		t.Fatalf("the fork's folder is a %q mount, not an overlay over its snapshot's tree: its first folder went under it", mountType(t, fdir))
	}
	for i := range files {
		name := fmt.Sprintf("f%04d.txt", i)
		if got := read(t, filepath.Join(fdir, name)); len(got) != 512+i {
			t.Fatalf("the fork's %s holds %d bytes, want %d", name, len(got), 512+i)
		}
	}
}

// mountType is the file system type mounted on dir, or "".
func mountType(t *testing.T, dir string) string {
	t.Helper()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	mounts, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		t.Fatal(err)
	}
	kind := ""
	for _, line := range strings.Split(string(mounts), "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[1] == real {
			kind = f[2]
		}
	}
	return kind
}
