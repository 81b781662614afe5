package proxmox_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/snapshots"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers/proxmox"
)

// TestEarlierGuestCountsForRoom: after a ZFS undo's swap, the box's earlier
// guest's disk counts in the room of its storage: a take there is refused
// past "Refuse new snapshots when a host's storage is past", and the refusal
// names the earlier guest's snapshots among what would free room; once they
// are deleted the earlier guest goes with the last of them, its disk is free
// again, and the same take is admitted.
func TestEarlierGuestCountsForRoom(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newSim(t, simOpts{zfsOn: true})
	env := newCore(t, e, "", nil)
	adopt(t, env, "river-elk", proxmox.KindLXC, lxcZFS)
	must(t, e.sim.Write(lxcZFS, 5*gib))
	first := takeDone(t, env, snapshots.Owner(), "river-elk", "first")
	newest := takeDone(t, env, snapshots.Owner(), "river-elk", "newest")
	op, err := env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "river-elk", Snapshot: newest.ID})
	must(t, err)
	rop := env.Wait(t, op)
	if rop.State != snapshots.OpDone || rop.UndoID == nil {
		t.Fatalf("the ZFS restore: %s %q, undo %v", rop.State, deref(rop.Error), rop.UndoID)
	}
	op, err = env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "river-elk", Snapshot: *rop.UndoID})
	must(t, err)
	if got := env.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("the undo's swap: %s %q", got.State, deref(got.Error))
	}
	if g, err := e.sim.Guest(lxcZFS); err != nil || !strings.Contains(g.Config["tags"], proxmox.EarlierTag) {
		t.Fatalf("after the swap, guest %d is not the earlier guest: %v", lxcZFS, err)
	}

	// Just past the room setting, with the earlier guest's disk.
	st, err := env.Core.Settings(ctx)
	must(t, err)
	must(t, e.sim.FillStorage("pve-2", "local-zfs", float64(st.RoomPercent)+0.5))
	nb, err := env.Core.Box(ctx, snapshots.Owner(), "river-elk")
	must(t, err)
	vmid, err := strconv.Atoi(nb.GuestRef)
	must(t, err)
	var total float64
	full := func() float64 {
		t.Helper()
		plan, err := e.be.PlanSnapshots(ctx, guest(proxmox.KindLXC, "pve-2", vmid), nil)
		must(t, err)
		total = float64(plan.Storage.FreeBytes) / (1 - plan.Storage.PercentFull/100)
		return plan.Storage.PercentFull
	}
	before := full()
	earlier, err := e.sim.Guest(lxcZFS)
	must(t, err)
	if earlier.Written < 5*gib {
		t.Fatalf("the earlier guest holds %d bytes; the test wants its 5 GiB", earlier.Written)
	}
	_, _, err = env.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: "river-elk", Name: "no room"})
	r, ok := snapshots.AsRefusal(err)
	if !ok || r.Code != snapshots.CodeRoom || !strings.Contains(r.Words, "‘first’ of river-elk") || !strings.Contains(r.Words, "‘newest’ of river-elk") {
		t.Fatalf("a take past the room with the earlier guest's disk: %v; want refused for room, naming the earlier guest's snapshots", err)
	}

	for _, sn := range []*snapshots.Snapshot{first, newest} {
		op, err := env.Keeps.Delete(ctx, snapshots.Owner(), snapshots.DeleteRequest{Box: "river-elk", Snapshot: sn.ID})
		must(t, err)
		if got := env.Wait(t, op); got.State != snapshots.OpDone {
			t.Fatalf("delete %s on the earlier guest: %s %q", sn.Name, got.State, deref(got.Error))
		}
	}
	if _, err := e.sim.Guest(lxcZFS); err == nil {
		t.Fatal("the earlier guest outlived its last snapshot")
	}
	// Its disk was counted: the storage is that much emptier now.
	if after, want := full(), before-float64(earlier.Written)/total*100+0.1; after > want {
		t.Fatalf("the storage was %.1f%% full with the earlier guest (%d bytes written), %.1f%% after it went; want at most %.1f%%", before, earlier.Written, after, want)
	}
}
