package proxmox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers/proxmox"
)

// TestRoomSweep: past the room setting plus 7 points, the sweep deletes the
// agents' snapshots on that storage that nobody kept, oldest first, each
// checked by eligible at the moment, and logs "by boxsnap: pve-1's storage
// was 93% full"; the person's and kept ones stay.
func TestRoomSweep(t *testing.T) {
	t.Parallel()
	e := newSim(t, simOpts{})
	env := newCore(t, e, "", nil)
	ctx := context.Background()
	th, agent, _ := env.Thread(t, "Fix the sign-in flow")
	// Only the person adopts; the box is the thread's.
	if _, err := env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "amber-fox", Kind: proxmox.KindLXC, Backend: "pve-lab", Adopt: itoa(lxcThin), Thread: th.ID}); err != nil {
		t.Fatal(err)
	}
	old := takeDone(t, env, agent, "amber-fox", "oldest")
	kept := takeDone(t, env, agent, "amber-fox", "kept")
	mid := takeDone(t, env, agent, "amber-fox", "middle")
	mine := takeDone(t, env, snapshots.Owner(), "amber-fox", "the person's")
	op, err := env.Keeps.Keep(ctx, snapshots.Owner(), snapshots.KeepRequest{Box: "amber-fox", Snapshot: kept.ID})
	must(t, err)
	env.Wait(t, op)

	// Under 92%: nothing goes.
	must(t, e.sim.FillStorage("pve-1", "local-lvm", 90))
	rep, err := env.Sweeps.RoomSweep(ctx)
	must(t, err)
	if len(rep.Deleted) != 0 || len(rep.Checked) != 1 {
		t.Fatalf("at 90%%: %+v", rep)
	}
	must(t, e.sim.FillStorage("pve-1", "local-lvm", 93))
	// A host's own room sweep reads only its one-host backends' storage:
	// every host reaches Proxmox, which the room sweep itself reads.
	rep, err = env.Sweeps.RoomSweepHere(ctx)
	must(t, err)
	if len(rep.Deleted) != 0 || len(rep.Checked) != 0 {
		t.Fatalf("a host's own room sweep at 93%%: %+v", rep)
	}
	rep, err = env.Sweeps.RoomSweep(ctx)
	must(t, err)
	if len(rep.Deleted) == 0 || rep.Deleted[0] != old.ID {
		t.Fatalf("at 93%%: deleted %v, want the oldest agent's (%s) first", rep.Deleted, old.ID)
	}
	for _, id := range rep.Deleted {
		if id != old.ID && id != mid.ID {
			t.Fatalf("the room sweep deleted %s, which is kept or the person's", id)
		}
	}
	for _, sn := range []*snapshots.Snapshot{kept, mine} {
		if s := snapshotState(t, env, sn.ID); s != snapshots.StateReady {
			t.Fatalf("%s is %s after the room sweep", sn.Name, s)
		}
	}
	words := false
	for _, ev := range boxLog(t, env, "amber-fox") {
		if ev.Kind == snapshots.EvSnapshotDeleted && strings.Contains(ev.Words, "by boxsnap: pve-1's storage was 93% full") {
			words = true
		}
	}
	if !words {
		t.Fatal("no snapshot-deleted with “by boxsnap: pve-1's storage was 93% full”")
	}
}

// TestExpiry: a kept snapshot whose keep date passed is deleted as an
// operation of kind expiry, "its keep ended"; one still kept stays.
func TestExpiry(t *testing.T) {
	t.Parallel()
	e := newSim(t, simOpts{})
	clk := newClock()
	env := newCore(t, e, "", clk.Now)
	ctx := context.Background()
	adopt(t, env, "amber-fox", proxmox.KindLXC, lxcThin)
	short := takeDone(t, env, snapshots.Owner(), "amber-fox", "short")
	long := takeDone(t, env, snapshots.Owner(), "amber-fox", "long")
	for _, k := range []struct {
		sn   *snapshots.Snapshot
		days int
	}{{short, 1}, {long, 30}} {
		op, err := env.Keeps.Keep(ctx, snapshots.Owner(), snapshots.KeepRequest{Box: "amber-fox", Snapshot: k.sn.ID, Days: k.days})
		must(t, err)
		if got := env.Wait(t, op); got.State != snapshots.OpDone {
			t.Fatalf("keep: %s %s", got.State, deref(got.Error))
		}
	}
	// The label on Proxmox carries the keep date.
	g, _ := e.sim.Guest(lxcThin)
	for _, s := range g.Snapshots {
		if !strings.Contains(s.Description, " kept 20") {
			t.Fatalf("label %q has no keep date", s.Description)
		}
	}
	ops, err := env.Sweeps.ExpireKeeps(ctx)
	must(t, err)
	if len(ops) != 0 {
		t.Fatalf("expired before the date: %d", len(ops))
	}
	clk.Advance(3 * 24 * time.Hour)
	ops, err = env.Sweeps.ExpireKeeps(ctx)
	must(t, err)
	if len(ops) != 1 || ops[0].Kind != snapshots.OpExpiry {
		t.Fatalf("expiry ops %+v", ops)
	}
	if got := env.Wait(t, ops[0]); got.State != snapshots.OpDone {
		t.Fatalf("expiry: %s %s", got.State, deref(got.Error))
	}
	if snapshotState(t, env, short.ID) != "gone" || snapshotState(t, env, long.ID) != snapshots.StateReady {
		t.Fatalf("after the expiry: short %s, long %s", snapshotState(t, env, short.ID), snapshotState(t, env, long.ID))
	}
	if g, _ := e.sim.Guest(lxcThin); len(g.Snapshots) != 1 {
		t.Fatalf("Proxmox holds %d snapshots after the expiry", len(g.Snapshots))
	}
	found := false
	for _, ev := range boxLog(t, env, "amber-fox") {
		if ev.Kind == snapshots.EvSnapshotDeleted && strings.Contains(ev.Words, "its keep ended") {
			found = true
		}
	}
	if !found {
		t.Fatal("no snapshot-deleted “its keep ended”")
	}
}
