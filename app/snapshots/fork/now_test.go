package fork_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	forks "github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/providers"
)

// TestForkNowCapturesOnce: a fork of the box now is the fork seam's, for
// every surface: CaptureNow checks the fork into N first (the count, the
// names, the room) and refuses before anything is taken; then it takes one
// snapshot, "for a fork", for one fork or many, and a repeat of the
// request is the same take. The forks of that snapshot hold the box as it
// was at the capture.
func TestForkNowCapturesOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{})
	_, other, _ := e.Thread(t, "Someone else's work")
	e.Box(t, other, "fix-2")
	_, agent, _ := e.Thread(t, "Try three fixes")
	src := e.Box(t, agent, "amber-fox")
	dir := e.Local.BoxDir(providers.Guest{Ref: src.GuestRef})
	write(t, filepath.Join(dir, "notes.txt"), "as it was at the capture")
	none := func() {
		t.Helper()
		if all, err := e.Core.SnapshotsOfBox(ctx, e.Pool, src.ID); err != nil || len(all) != 0 {
			t.Fatalf("a refused fork of the box now took %d snapshots (%v)", len(all), err)
		}
	}

	_, err := e.Forks.CaptureNow(ctx, agent, forks.NowRequest{Box: "amber-fox", Name: "fix", Count: 3})
	coretest.RefusedWith(t, err, "The name fix-2 cannot be used: choose another. No fork was made.")
	none()
	_, err = e.Forks.CaptureNow(ctx, agent, forks.NowRequest{Box: "amber-fox", Count: forks.DefaultMaxCount + 1})
	coretest.RefusedWith(t, err, fmt.Sprintf("A fork makes 1 to %d boxes in one call, not %d.", forks.DefaultMaxCount, forks.DefaultMaxCount+1))
	none()

	req := forks.NowRequest{Box: "amber-fox", Name: "try", Count: 3, RequestID: "rq-now"}
	op, err := e.Forks.CaptureNow(ctx, agent, req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.Forks.CaptureNow(ctx, agent, req)
	if err != nil || again.ID != op.ID {
		t.Fatalf("a repeat of the capture: %v, %v; want %s", again, err, op.ID)
	}
	if op = e.Wait(t, op); op.State != snapshots.OpDone || op.Target == nil {
		t.Fatalf("the capture ended %s: %s", op.State, coretest.Deref(op.Error))
	}
	write(t, filepath.Join(dir, "notes.txt"), "changed after")
	sn, _, err := e.Core.Snapshot(ctx, agent, *op.Target)
	if err != nil || sn.Name != forks.TakeName {
		t.Fatalf("the capture's snapshot: %+v, %v", sn, err)
	}
	ops, err := e.Forks.ForkMany(ctx, agent, forks.ForkManyRequest{Box: "amber-fox", Snapshot: sn.ID, Name: req.Name, Count: req.Count, RequestID: req.RequestID})
	if err != nil {
		t.Fatal(err)
	}
	for i, op := range ops {
		if done := e.Wait(t, op); done.State != snapshots.OpDone {
			t.Fatalf("fork %d ended %s: %s", i+1, done.State, coretest.Deref(done.Error))
		}
		b, err := e.Core.Box(ctx, agent, fmt.Sprintf("try-%d", i+1))
		if err != nil {
			t.Fatal(err)
		}
		if got := read(t, filepath.Join(e.Local.BoxDir(providers.Guest{Ref: b.GuestRef}), "notes.txt")); got != "as it was at the capture" {
			t.Fatalf("try-%d holds %q", i+1, got)
		}
	}
	if all, err := e.Core.SnapshotsOfBox(ctx, e.Pool, src.ID); err != nil || len(all) != 1 {
		t.Fatalf("one capture for three forks: the source holds %d snapshots (%v)", len(all), err)
	}
}
