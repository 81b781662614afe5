package fork_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	forks "github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/providers"
)

// TestFork: a fork is a new box of the agent's thread with the snapshot's
// files, a new identity and no source credentials; the source's log says
// fork-asked then forked, and the fork's own log starts with made.
func TestFork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{})
	_, agent, _ := e.Thread(t, "Fix the sign-in flow")
	src := e.Box(t, agent, "amber-fox")
	dir := e.Local.BoxDir(providers.Guest{Ref: src.GuestRef})
	write(t, filepath.Join(dir, "notes.txt"), "as it was at the take")
	if err := os.MkdirAll(filepath.Join(dir, "home/dev/.config/gh"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "home/dev/.config/gh/hosts.yml"), "oauth_token: secret")
	sn := e.TakeReady(t, agent, "amber-fox", "before the migration")
	write(t, filepath.Join(dir, "notes.txt"), "changed after")

	op, err := e.Forks.Fork(ctx, agent, forks.ForkRequest{Box: "amber-fox", Snapshot: sn.ID, Name: "amber-fork"})
	if err != nil {
		t.Fatal(err)
	}
	done := e.Wait(t, op)
	if done.State != snapshots.OpDone {
		t.Fatalf("fork ended %s: %s", done.State, coretest.Deref(done.Error))
	}
	var res forks.ForkResult
	if err := json.Unmarshal(done.Result, &res); err != nil || !strings.HasPrefix(res.From, "forked from amber-fox at ") {
		t.Fatalf("result %s (%v)", done.Result, err)
	}
	fork, err := e.Core.Box(ctx, agent, "amber-fork")
	if err != nil {
		t.Fatalf("the agent cannot see its fork: %v", err)
	}
	if fork.ThreadID == nil || *fork.ThreadID != agent.Thread || fork.ID == src.ID {
		t.Fatalf("fork %+v", fork)
	}
	fdir := e.Local.BoxDir(providers.Guest{Ref: fork.GuestRef})
	if got := read(t, filepath.Join(fdir, "notes.txt")); got != "as it was at the take" {
		t.Fatalf("the fork holds %q", got)
	}
	if _, err := os.Stat(filepath.Join(fdir, "home/dev/.config/gh/hosts.yml")); err == nil {
		t.Fatal("the fork kept its source's credential file")
	}
	if id := read(t, filepath.Join(fdir, ".boxsnap/identity")); !strings.Contains(id, fork.ID) || strings.Contains(id, src.ID) {
		t.Fatalf("the fork's identity marker: %s", id)
	}
	srcLog, _ := e.Boxes.BoxLog(ctx, snapshots.Owner(), "amber-fox", 20)
	kinds := map[string]bool{}
	for _, ev := range srcLog {
		kinds[ev.Kind] = true
	}
	if !kinds[snapshots.EvForkAsked] || !kinds[snapshots.EvForked] {
		t.Fatalf("the source's log lacks fork-asked or forked: %v", kinds)
	}
	forkLog, _ := e.Boxes.BoxLog(ctx, snapshots.Owner(), "amber-fork", 20)
	if len(forkLog) == 0 || forkLog[len(forkLog)-1].Kind != snapshots.EvMade || !strings.Contains(forkLog[len(forkLog)-1].Words, "Forked from amber-fox, ‘before the migration’") {
		t.Fatalf("the fork's log: %+v", forkLog)
	}
	// Another thread cannot fork what it cannot see.
	_, other, _ := e.Thread(t, "Another")
	_, err = e.Forks.Fork(ctx, other, forks.ForkRequest{Snapshot: sn.ID})
	coretest.RefusedWith(t, err, "No snapshot "+sn.ID+" that you can see.")
}

// TestForkKeptOfReleasedAndUnsafe: a kept snapshot of a released box forks as
// one of the person's machines; a snapshot taken before the box had the
// identity reset neither forks nor is kept.
func TestForkKeptOfReleasedAndUnsafe(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{})
	_, agent, _ := e.Thread(t, "Fix the sign-in flow")
	b := e.Box(t, agent, "brisk-lake")
	dir := e.Local.BoxDir(providers.Guest{Ref: b.GuestRef})
	write(t, filepath.Join(dir, "notes.txt"), "kept")
	kept := e.TakeReady(t, agent, "brisk-lake", "release candidate")
	kop, err := e.Keeps.Keep(ctx, snapshots.Owner(), snapshots.KeepRequest{Snapshot: kept.ID})
	if err != nil {
		t.Fatal(err)
	}
	e.Wait(t, kop)
	if err := os.Remove(filepath.Join(dir, ".boxsnap/identity")); err != nil {
		t.Fatal(err)
	}
	unsafe := e.TakeReady(t, agent, "brisk-lake", "no reset")
	_, err = e.Forks.Fork(ctx, snapshots.Owner(), forks.ForkRequest{Snapshot: unsafe.ID})
	coretest.RefusedWith(t, err, "Taken before brisk-lake's image had the identity reset: it could not be forked after a release.", "refresh the image, make the box again")
	_, err = e.Keeps.Keep(ctx, snapshots.Owner(), snapshots.KeepRequest{Snapshot: unsafe.ID})
	coretest.RefusedWith(t, err, "Taken before brisk-lake's image had the identity reset: it could not be forked after a release.", "refresh the image, make the box again")

	rop, err := e.Boxes.ReleaseBox(ctx, snapshots.Owner(), "brisk-lake", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Wait(t, rop); got.State != snapshots.OpDone {
		t.Fatalf("release ended %s: %s", got.State, coretest.Deref(got.Error))
	}
	op, err := e.Forks.Fork(ctx, snapshots.Owner(), forks.ForkRequest{Snapshot: kept.ID, Name: "brisk-again"})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("fork of the released box's kept snapshot ended %s: %s", got.State, coretest.Deref(got.Error))
	}
	fork, err := e.Core.Box(ctx, snapshots.Owner(), "brisk-again")
	if err != nil || fork.ThreadID != nil {
		t.Fatalf("the fork of a released box's kept snapshot is one of the person's machines: %+v %v", fork, err)
	}
	if got := read(t, filepath.Join(e.Local.BoxDir(providers.Guest{Ref: fork.GuestRef}), "notes.txt")); got != "kept" {
		t.Fatalf("the fork holds %q", got)
	}
}
