package hosts_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/hosts"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
)

// TestOperationRunsOnItsHost: two hosts with their own data folders on one
// database. A local box is owned by the host it was made on; its operation
// (admitted there, by a process that runs no workers) goes on that host's
// queue, and the other host, working all along, never
// runs it: it runs its own box's operation, admitted later, while the first
// waits; the owner's worker then runs it, from the owner's folder.
func TestOperationRunsOnItsHost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	a := hostEnv(t, pool, "host-a", false, nil)
	b := hostEnv(t, pool, "host-b", true, nil)
	owner := snapshots.Owner()

	boxA := a.Box(t, owner, "amber-fox")
	if got := ownerOf(t, pool, "amber-fox"); got != "host-a" {
		t.Fatalf("a box made on host-a is owned by %q", got)
	}
	if err := os.WriteFile(filepath.Join(a.Local.BoxDir(providers.Guest{Ref: boxA.GuestRef}), "notes.txt"), []byte("on host-a"), 0o644); err != nil {
		t.Fatal(err)
	}
	opA, _, err := a.Take.Take(ctx, owner, take.TakeRequest{Box: "amber-fox", Name: "on host-a"})
	if err != nil {
		t.Fatal(err)
	}

	b.Box(t, owner, "brisk-lake")
	if got := ownerOf(t, pool, "brisk-lake"); got != "host-b" {
		t.Fatalf("a box made on host-b is owned by %q", got)
	}
	opB, _, err := b.Take.Take(ctx, owner, take.TakeRequest{Box: "brisk-lake", Name: "on host-b"})
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Wait(t, opB); got.State != snapshots.OpDone {
		t.Fatalf("host-b's own take: %s %s", got.State, coretest.Deref(got.Error))
	}

	var queue, state string
	if err := pool.QueryRow(ctx, "SELECT queue, state::text FROM river_job WHERE args->>'op' = $1", opA.ID).Scan(&queue, &state); err != nil {
		t.Fatal(err)
	}
	if queue != operations.HostQueue("host-a") || state != "available" {
		t.Fatalf("host-a's box's take is in queue %q, %s; want host-a's queue %q, available", queue, state, operations.HostQueue("host-a"))
	}
	still, err := a.Core.Engine().ByID(ctx, pool, opA.ID)
	if err != nil {
		t.Fatal(err)
	}
	if still.State != snapshots.OpRunning || still.Step != operations.StepQueued || still.StartedAt != nil {
		t.Fatalf("host-b ran host-a's box's take: %s at %s", still.State, still.Step)
	}

	if err := a.Core.RunOperation(ctx, opA.ID); err != nil {
		t.Fatal(err)
	}
	if got := a.Wait(t, opA); got.State != snapshots.OpDone {
		t.Fatalf("host-a's take: %s %s", got.State, coretest.Deref(got.Error))
	}
}

// TestHostsSeen: each process records its host, seen now.
func TestHostsSeen(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	a := hostEnv(t, pool, "host-a", false, nil)
	hostEnv(t, pool, "host-b", false, nil)
	list, err := a.Hosts.List(context.Background(), snapshots.Owner())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != "host-a" || list[1].Name != "host-b" || !list[0].Alive || !list[1].Alive || !list[0].This || list[1].This {
		t.Fatalf("hosts %+v", list)
	}
}

// TestMoveRefusedWithoutSharedContent: a local box's snapshots are on its
// host's disk only, so a move to another host is refused in words and
// changes nothing; so are a move by an agent, to a host that never ran
// boxsnap here, and to the host the box is on.
func TestMoveRefusedWithoutSharedContent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	a := hostEnv(t, pool, "host-a", true, nil)
	hostEnv(t, pool, "host-b", false, nil)
	_, agent, _ := a.Thread(t, "Fix the sign-in flow")
	a.Box(t, agent, "amber-fox")
	a.TakeReady(t, snapshots.Owner(), "amber-fox", "before the move")

	_, err := a.Hosts.Move(ctx, snapshots.Owner(), "amber-fox", "host-b")
	coretest.RefusedWith(t, err, "amber-fox's snapshots are on host host-a only; set a content store to move boxes between hosts.")
	_, err = a.Hosts.Move(ctx, agent, "amber-fox", "host-b")
	coretest.RefusedWith(t, err, "Only the person moves boxes between hosts")
	_, err = a.Hosts.Move(ctx, snapshots.Owner(), "amber-fox", "host-z")
	coretest.RefusedWith(t, err, "No host named host-z has run boxsnap here")
	_, err = a.Hosts.Move(ctx, snapshots.Owner(), "amber-fox", "host-a")
	coretest.RefusedWith(t, err, "amber-fox is already on host host-a.")
	if got := ownerOf(t, pool, "amber-fox"); got != "host-a" {
		t.Fatalf("after refused moves the box is owned by %q", got)
	}
	var moves int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM operations WHERE kind <> 'take'").Scan(&moves); err != nil || moves != 0 {
		t.Fatalf("refused moves admitted %d operations (%v)", moves, err)
	}
}

// TestHostTakeover: a host still seen alive keeps its boxes: a takeover
// from it, and marking it gone, are refused in words. Once it has not been
// seen for a while and the person marks it gone, another host takes its
// boxes over from their last snapshots; a box whose snapshots only the
// gone host reached is left there, and the takeover says why. A host
// marked gone that is seen again is no longer gone.
func TestHostTakeover(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	clk := newClock()
	a := hostEnv(t, pool, "host-a", true, clk.now)
	b := hostEnv(t, pool, "host-b", false, clk.now)
	person := snapshots.Owner()
	_, agent, _ := a.Thread(t, "Fix the sign-in flow")
	a.Box(t, person, "amber-fox")
	a.TakeReady(t, person, "amber-fox", "last before the host went")

	_, err := b.Hosts.TakeOver(ctx, person, "host-a", "")
	coretest.RefusedWith(t, err, "Host host-a was seen 0 seconds ago; a host still seen alive keeps its boxes.")
	_, err = b.Hosts.MarkGone(ctx, person, "host-a")
	coretest.RefusedWith(t, err, "a host still seen alive keeps its boxes")

	clk.forward(hosts.SeenAliveFor + time.Minute)
	if err := b.Hosts.Seen(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = b.Hosts.TakeOver(ctx, person, "host-a", "")
	coretest.RefusedWith(t, err, "Host host-a is not marked gone; mark it gone for good first.")
	_, err = b.Hosts.MarkGone(ctx, agent, "host-a")
	coretest.RefusedWith(t, err, "Only the person moves boxes between hosts and takes hosts over.")
	_, err = b.Hosts.MarkGone(ctx, person, "host-b")
	coretest.RefusedWith(t, err, "host-b")
	gone, err := b.Hosts.MarkGone(ctx, person, "host-a")
	if err != nil {
		t.Fatal(err)
	}
	if gone.GoneAt == nil || gone.Alive || gone.Boxes != 1 {
		t.Fatalf("host-a marked gone: %+v", gone)
	}
	_, err = b.Hosts.TakeOver(ctx, agent, "host-a", "")
	coretest.RefusedWith(t, err, "Only the person")
	_, err = b.Hosts.TakeOver(ctx, person, "host-a", "host-a")
	coretest.RefusedWith(t, err, "Take host host-a's boxes over from host host-a's own pages, API or CLI")

	res, err := b.Hosts.TakeOver(ctx, person, "host-a", "")
	if err != nil {
		t.Fatal(err)
	}
	if res.From != "host-a" || res.To != "host-b" || len(res.Taken) != 0 || len(res.Left) != 1 || res.Left[0].Name != "amber-fox" ||
		!strings.Contains(res.Left[0].Why, "amber-fox's snapshots are on host host-a only; set a content store to move boxes between hosts.") {
		t.Fatalf("takeover without a content store: %+v", res)
	}
	if got := ownerOf(t, pool, "amber-fox"); got != "host-a" {
		t.Fatalf("a box left on the gone host is owned by %q", got)
	}

	if err := a.Hosts.Seen(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = b.Hosts.TakeOver(ctx, person, "host-a", "")
	coretest.RefusedWith(t, err, "a host still seen alive keeps its boxes")
}

// TestReconcileLeavesAnotherHostsBoxes: a reconcile on one host lists its
// own folder only, so it leaves another host's local snapshots ready and
// its boxes' guests unmarked.
func TestReconcileLeavesAnotherHostsBoxes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	a := hostEnv(t, pool, "host-a", true, nil)
	b := hostEnv(t, pool, "host-b", false, nil)
	person := snapshots.Owner()
	a.Box(t, person, "amber-fox")
	sn := a.TakeReady(t, person, "amber-fox", "on host-a")

	rep, err := b.Sweeps.Reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.GuestsGone) != 0 {
		t.Fatalf("host-b's reconcile found host-a's guests gone: %v", rep.GuestsGone)
	}
	got, _, err := b.Core.Snapshot(ctx, person, sn.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != snapshots.StateReady {
		t.Fatalf("after host-b's reconcile host-a's snapshot is %s", got.State)
	}
	events, err := b.Boxes.BoxLog(ctx, person, "amber-fox", 50)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if e.Kind == snapshots.EvGuestGone || e.Kind == snapshots.EvSnapshotUnavailable || e.Kind == snapshots.EvSnapshotLost {
			t.Fatalf("host-b's reconcile logged %s: %s", e.Kind, e.Words)
		}
	}
}
