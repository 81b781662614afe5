package proxmox_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers/proxmox"
	"github.com/boxsnap/boxsnap/providers/pvesim"
)

// clock is the core's fake clock (Options.Now), so tests need no sleep.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now()} }

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// newCore starts a core on a fresh database whose install ID is install,
// with the local backend in root and the Proxmox backend of e as "pve-lab".
func newCore(t testing.TB, e *simEnv, root string, now func() time.Time) *coretest.Env {
	t.Helper()
	pool := dbtest.New(t)
	return buildCore(t, pool, e, root, now)
}

func buildCore(t testing.TB, pool *pgxpool.Pool, e *simEnv, root string, now func() time.Time) *coretest.Env {
	t.Helper()
	ctx := context.Background()
	if root == "" {
		root = t.TempDir()
	}
	// The trash is off: these tests release as a release that deletes
	// (TestTrashOnProxmox puts a guest in the trash).
	env, err := coretest.Build(ctx, pool, coretest.Options{Install: install, LocalRoot: root, Now: now, NoTrash: true,
		Extra: []snapshots.Backend{{ID: "pve-lab", Kind: "proxmox", Label: "pve-lab", Snap: e.be, Boxes: e.be}}})
	must(t, err)
	t.Cleanup(env.Stop)
	if env.Install != install {
		t.Fatalf("install %s, want %s", env.Install, install)
	}
	return env
}

func adopt(t testing.TB, env *coretest.Env, name, kind string, vmid int) *snapshots.Box {
	t.Helper()
	b, err := env.Boxes.AcquireBox(context.Background(), snapshots.Owner(), snapshots.BoxRequest{Name: name, Kind: kind, Backend: "pve-lab", Adopt: itoa(vmid)})
	must(t, err)
	return b
}

func takeDone(t testing.TB, env *coretest.Env, c snapshots.Caller, box, name string) *snapshots.Snapshot {
	t.Helper()
	op, sn, err := env.Take.Take(context.Background(), c, taking.TakeRequest{Box: box, Name: name})
	must(t, err)
	if got := env.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("take %s: %s %s", name, got.State, deref(got.Error))
	}
	sn, _, err = env.Core.Snapshot(context.Background(), snapshots.Owner(), sn.ID)
	must(t, err)
	return sn
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func snapshotState(t testing.TB, env *coretest.Env, id string) string {
	t.Helper()
	sn, _, err := env.Core.Snapshot(context.Background(), snapshots.Owner(), id)
	if err != nil {
		return "gone"
	}
	return sn.State
}

func boxLog(t testing.TB, env *coretest.Env, box string) []snapshots.LogEvent {
	t.Helper()
	l, err := env.Boxes.BoxLog(context.Background(), snapshots.Owner(), box, 500)
	must(t, err)
	return l
}

func countKind(log []snapshots.LogEvent, kind string) int {
	n := 0
	for _, e := range log {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

func pinned(t testing.TB, env *coretest.Env, id string) int {
	t.Helper()
	var n int
	must(t, env.Pool.QueryRow(context.Background(),
		"SELECT count(*) FROM operations WHERE state IN ('running', 'unknown') AND $1 = ANY (snapshots)", id).Scan(&n))
	return n
}

// TestConfirmedTake: a take whose task dies part way is incomplete, never
// ready; Delete finishes Proxmox's clean-up once the host's lock is cleared.
func TestConfirmedTake(t *testing.T) {
	t.Parallel()
	e := newSim(t, simOpts{})
	env := newCore(t, e, "", nil)
	ctx := context.Background()
	adopt(t, env, "amber-fox", proxmox.KindLXC, lxcThin)
	e.sim.DieNextTask("vzsnapshot", lxcThin)
	op, sn, err := env.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: "amber-fox", Name: "before the migration"})
	must(t, err)
	got := env.Wait(t, op)
	if got.State != snapshots.OpFailed || snapshotState(t, env, sn.ID) != snapshots.StateIncomplete {
		t.Fatalf("a take whose task died: operation %s, snapshot %s; want failed and incomplete", got.State, snapshotState(t, env, sn.ID))
	}
	g, _ := e.sim.Guest(lxcThin)
	if len(g.Snapshots) != 1 || g.Snapshots[0].SnapState != "prepare" {
		t.Fatalf("on Proxmox: %+v", g.Snapshots)
	}
	// The next sweep finds it, still incomplete, and records its reference
	// on Proxmox (the core's take does not record it when it is incomplete).
	if _, err := env.Sweeps.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if s := snapshotState(t, env, sn.ID); s != snapshots.StateIncomplete {
		t.Fatalf("after a sweep the snapshot is %s", s)
	}
	// The dead task left lock=snapshot, which only root clears: the delete
	// says the host's command, and the snapshot stays incomplete.
	dop, err := env.Keeps.Delete(ctx, snapshots.Owner(), snapshots.DeleteRequest{Box: "amber-fox", Snapshot: sn.ID})
	must(t, err)
	got = env.Wait(t, dop)
	if got.State != snapshots.OpFailed || !strings.Contains(deref(got.Error), "Run pct unlock 214 on pve-1") {
		t.Fatalf("delete of a locked guest's snapshot: %s %q", got.State, deref(got.Error))
	}
	if s := snapshotState(t, env, sn.ID); s != snapshots.StateIncomplete {
		t.Fatalf("after the refused delete the snapshot is %s", s)
	}
	must(t, e.sim.Unlock(lxcThin)) // the person ran pct unlock 214
	dop, err = env.Keeps.Delete(ctx, snapshots.Owner(), snapshots.DeleteRequest{Box: "amber-fox", Snapshot: sn.ID})
	must(t, err)
	if got = env.Wait(t, dop); got.State != snapshots.OpDone {
		t.Fatalf("delete after the unlock: %s %q", got.State, deref(got.Error))
	}
	g, _ = e.sim.Guest(lxcThin)
	if len(g.Snapshots) != 0 || g.Lock != "" || snapshotState(t, env, sn.ID) != "gone" {
		t.Fatalf("after the delete: Proxmox %+v lock %q, record %s", g.Snapshots, g.Lock, snapshotState(t, env, sn.ID))
	}
}

// TestUnavailableNotLost: with pve-1 cut off, its snapshots are unavailable,
// never lost, and come back ready; a snapshot gone from a successful listing
// is lost only after two listings 10 minutes apart.
func TestUnavailableNotLost(t *testing.T) {
	t.Parallel()
	e := newSim(t, simOpts{})
	clk := newClock()
	env := newCore(t, e, "", clk.Now)
	ctx := context.Background()
	adopt(t, env, "amber-fox", proxmox.KindLXC, lxcThin)
	adopt(t, env, "river-elk", proxmox.KindLXC, lxcZFS)
	a := takeDone(t, env, snapshots.Owner(), "amber-fox", "one")
	b := takeDone(t, env, snapshots.Owner(), "amber-fox", "two")
	c := takeDone(t, env, snapshots.Owner(), "river-elk", "elsewhere")

	must(t, e.sim.CutNode("pve-1"))
	for range 3 { // an hour cut off, swept every 20 minutes
		rep, err := env.Sweeps.Reconcile(ctx)
		must(t, err)
		if rep.Lost != 0 {
			t.Fatalf("a cut-off node's snapshots were lost: %+v", rep)
		}
		clk.Advance(20 * time.Minute)
	}
	for _, id := range []string{a.ID, b.ID} {
		if s := snapshotState(t, env, id); s != snapshots.StateUnavailable {
			t.Fatalf("pve-1 cut off: %s is %s, want unavailable", id, s)
		}
	}
	if s := snapshotState(t, env, c.ID); s != snapshots.StateReady {
		t.Fatalf("pve-2's snapshot is %s while pve-1 is cut off", s)
	}
	must(t, e.sim.ReconnectNode("pve-1"))
	rep, err := env.Sweeps.Reconcile(ctx)
	must(t, err)
	if rep.Back != 2 || snapshotState(t, env, a.ID) != snapshots.StateReady {
		t.Fatalf("pve-1 back: %+v, %s", rep, snapshotState(t, env, a.ID))
	}

	// Deleted on the host by hand: missing once, lost only 10 minutes later.
	if _, err := e.sim.OutsideDelete(lxcThin, b.Ref, false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the outside delete", func() bool { g, _ := e.sim.Guest(lxcThin); return len(g.Snapshots) == 1 })
	for _, step := range []struct {
		advance time.Duration
		want    string
	}{{0, snapshots.StateReady}, {5 * time.Minute, snapshots.StateReady}, {5*time.Minute - time.Second, snapshots.StateReady}, {time.Second, snapshots.StateLost}} {
		clk.Advance(step.advance)
		_, err := env.Sweeps.Reconcile(ctx)
		must(t, err)
		if s := snapshotState(t, env, b.ID); s != step.want {
			t.Fatalf("after %s more: %s, want %s", step.advance, s, step.want)
		}
	}
	if s := snapshotState(t, env, a.ID); s != snapshots.StateReady {
		t.Fatalf("the snapshot still there is %s", s)
	}
	if n := countKind(boxLog(t, env, "amber-fox"), snapshots.EvSnapshotLost); n != 1 {
		t.Fatalf("snapshot-lost logged %d times", n)
	}

	// The whole cluster gone: every ready snapshot unavailable, none lost,
	// however long it lasts.
	must(t, e.sim.Close())
	for range 3 {
		rep, err := env.Sweeps.Reconcile(ctx)
		must(t, err)
		if rep.Lost != 0 || len(rep.Unreachable) != 1 || rep.Unreachable[0] != "pve-lab" {
			t.Fatalf("cluster gone: %+v", rep)
		}
		clk.Advance(time.Hour)
	}
	for _, id := range []string{a.ID, c.ID} {
		if s := snapshotState(t, env, id); s != snapshots.StateUnavailable {
			t.Fatalf("cluster gone: %s is %s, want unavailable", id, s)
		}
	}
	if s := snapshotState(t, env, b.ID); s != snapshots.StateLost {
		t.Fatalf("the lost one is %s", s)
	}
}

// TestOrphansQuarantined: with the database's records gone while boxsnap is
// stopped (a fresh database, the same install ID, the same local folder and
// Proxmox), the next reconcile finds every snapshot, kept ones as kept, and
// deletes none, on the local backend and on Proxmox.
func TestOrphansQuarantined(t *testing.T) {
	t.Parallel()
	e := newSim(t, simOpts{})
	root := t.TempDir()
	env := newCore(t, e, root, nil)
	ctx := context.Background()
	adopt(t, env, "amber-fox", proxmox.KindLXC, lxcThin)
	local := env.Box(t, snapshots.Owner(), "brisk-lake")
	var kept, unkept []*snapshots.Snapshot
	for _, box := range []string{"amber-fox", local.Name} {
		k := takeDone(t, env, snapshots.Owner(), box, "kept one")
		u := takeDone(t, env, snapshots.Owner(), box, "plain one")
		op, err := env.Keeps.Keep(ctx, snapshots.Owner(), snapshots.KeepRequest{Box: box, Snapshot: k.ID})
		must(t, err)
		if got := env.Wait(t, op); got.State != snapshots.OpDone {
			t.Fatalf("keep on %s: %s %s", box, got.State, deref(got.Error))
		}
		k, _, _ = env.Core.Snapshot(ctx, snapshots.Owner(), k.ID)
		kept, unkept = append(kept, k), append(unkept, u)
	}
	env.Stop()

	fresh := newCore(t, e, root, nil)
	rep, err := fresh.Sweeps.Reconcile(ctx)
	must(t, err)
	if rep.Kept != 2 || rep.Found != 2 || rep.Lost != 0 {
		t.Fatalf("reconcile of a fresh database: %+v; want 2 kept and 2 found", rep)
	}
	for _, k := range kept {
		sn, _, err := fresh.Core.Snapshot(ctx, snapshots.Owner(), k.ID)
		must(t, err)
		if sn.KeptUntil == nil || !sn.KeptUntil.Equal(*k.KeptUntil) || sn.State != snapshots.StateReady || sn.Ref != k.Ref {
			t.Fatalf("kept %s came back as %+v", k.ID, sn)
		}
	}
	for _, u := range unkept {
		sn, _, err := fresh.Core.Snapshot(ctx, snapshots.Owner(), u.ID)
		must(t, err)
		if !sn.Found || sn.KeptUntil != nil || sn.ByKind != "unknown" {
			t.Fatalf("unkept %s came back as %+v; want found, by unknown", u.ID, sn)
		}
		found := false
		for _, ev := range boxLog(t, fresh, sn.BoxID) {
			if ev.Kind == snapshots.EvSnapshotFound && strings.Contains(ev.Words, "not in boxsnap's records") {
				found = true
			}
		}
		if !found {
			t.Fatalf("no ‘Found on …, not in boxsnap's records’ for %s", u.ID)
		}
	}
	// Deletes none: Proxmox and the local folder still hold all four, and a
	// second reconcile and housekeeping a week later change nothing.
	if g, _ := e.sim.Guest(lxcThin); len(g.Snapshots) != 2 {
		t.Fatalf("Proxmox holds %d snapshots, want 2", len(g.Snapshots))
	}
	held, err := fresh.Local.HeldSnapshots(ctx)
	must(t, err)
	if len(held) != 2 {
		t.Fatalf("the local backend holds %d, want 2", len(held))
	}
	rep, err = fresh.Sweeps.Reconcile(ctx)
	must(t, err)
	if rep.Kept+rep.Found+rep.Recorded+rep.Lost != 0 {
		t.Fatalf("a second reconcile recorded again: %+v", rep)
	}

	// Held copies: a QEMU box's kept memory snapshot outlives its release
	// as a held copy of its disk; with the records lost again, the
	// reconcile finds the copy by its label, as kept, and it still forks.
	adopt(t, fresh, "quiet-owl", proxmox.KindQEMU, qemuThin)
	top, msn, err := fresh.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: "quiet-owl", Name: "with memory", Memory: true})
	must(t, err)
	if got := fresh.Wait(t, top); got.State != snapshots.OpDone {
		t.Fatalf("memory take: %s %s", got.State, deref(got.Error))
	}
	msn = keepDone(t, fresh, "quiet-owl", msn.ID)
	rop, err := fresh.Boxes.ReleaseBox(ctx, snapshots.Owner(), "quiet-owl", "")
	must(t, err)
	if got := fresh.Wait(t, rop); got.State != snapshots.OpDone {
		t.Fatalf("release of quiet-owl: %s %s", got.State, deref(got.Error))
	}
	if sn, _, err := fresh.Core.Snapshot(ctx, snapshots.Owner(), msn.ID); err != nil || sn.Guest != "held-copy" || sn.Holds != "disk" {
		t.Fatalf("the kept memory snapshot after the release: %+v %v; want a held copy, holding the disk", sn, err)
	}
	fresh.Stop()
	third := newCore(t, e, root, nil)
	rep, err = third.Sweeps.Reconcile(ctx)
	must(t, err)
	if rep.Kept < 3 || rep.Lost != 0 {
		t.Fatalf("reconcile after the records are lost again: %+v; want the held copy kept beside the others", rep)
	}
	sn, _, err := third.Core.Snapshot(ctx, snapshots.Owner(), msn.ID)
	must(t, err)
	if sn.Guest != "held-copy" || sn.KeptUntil == nil || !sn.KeptUntil.Equal(*msn.KeptUntil) || sn.State != snapshots.StateReady || sn.ForkSafe == nil {
		t.Fatalf("the held copy came back as %+v", sn)
	}
	fop, err := third.Forks.Fork(ctx, snapshots.Owner(), fork.ForkRequest{Box: sn.BoxID, Snapshot: sn.ID, Name: "owl-again"})
	must(t, err)
	if got := third.Wait(t, fop); got.State != snapshots.OpDone {
		t.Fatalf("fork of the found held copy: %s %s", got.State, deref(got.Error))
	}
	if n := len(heldCopies(t, e)); n != 1 {
		t.Fatalf("%d held copies; the reconcile deletes none", n)
	}
}

// restoreDone restores box to snapshot, with its undo, and waits.
func restoreDone(t *testing.T, env *coretest.Env, box, snap string) *snapshots.Operation {
	t.Helper()
	op, err := env.Restores.Restore(context.Background(), snapshots.Owner(), snapshots.RestoreRequest{Box: box, Snapshot: snap})
	must(t, err)
	got := env.Wait(t, op)
	if got.State != snapshots.OpDone {
		t.Fatalf("restore of %s to %s: %s %q %q", box, snap, got.State, deref(got.Error), deref(got.Observed))
	}
	return got
}

func written(t testing.TB, e *simEnv, vmid int) int64 {
	t.Helper()
	g, err := e.sim.Guest(vmid)
	must(t, err)
	return g.Written
}

// TestStorageRollback: on LVM-thin a restore to the oldest of three, with its
// undo, loses nothing written before the stop; on ZFS an older target is
// refused with the words, and with the switch on the newest restores with a
// held copy of the stopped guest, every newer snapshot still there; its Undo
// is a swap that leaves them on the earlier guest, found there again after
// the records are lost.
func TestStorageRollback(t *testing.T) {
	t.Parallel()
	t.Run("LVMThin", func(t *testing.T) {
		t.Parallel()
		e := newSim(t, simOpts{})
		env := newCore(t, e, "", nil)
		adopt(t, env, "amber-fox", proxmox.KindLXC, lxcThin)
		var want []int64
		var snaps []*snapshots.Snapshot
		for i, name := range []string{"first", "second", "third"} {
			must(t, e.sim.Write(lxcThin, int64(i+1)*gib))
			want = append(want, written(t, e, lxcThin))
			snaps = append(snaps, takeDone(t, env, snapshots.Owner(), "amber-fox", name))
		}
		must(t, e.sim.Write(lxcThin, 5*gib)) // written after the last take, before the stop
		before := written(t, e, lxcThin)
		op := restoreDone(t, env, "amber-fox", snaps[0].ID)
		if got := written(t, e, lxcThin); got != want[0] {
			t.Fatalf("after the restore to the oldest: %d bytes written, want %d", got, want[0])
		}
		if g, _ := e.sim.Guest(lxcThin); !g.Running || len(g.Snapshots) != 4 {
			t.Fatalf("after the restore: running %v, %d snapshots (3 and the undo)", g.Running, len(g.Snapshots))
		}
		if op.UndoID == nil || snapshotState(t, env, *op.UndoID) != snapshots.StateReady {
			t.Fatalf("no ready undo: %+v", op.UndoID)
		}
		restoreDone(t, env, "amber-fox", *op.UndoID)
		if got := written(t, e, lxcThin); got != before {
			t.Fatalf("after the undo: %d bytes written, want %d: what was written before the stop was lost", got, before)
		}
	})
	t.Run("ZFS", func(t *testing.T) {
		t.Parallel()
		e := newSim(t, simOpts{zfsOn: true})
		env := newCore(t, e, "", nil)
		ctx := context.Background()
		adopt(t, env, "river-elk", proxmox.KindLXC, lxcZFS)
		var snaps []*snapshots.Snapshot
		for _, name := range []string{"first", "second", "third"} {
			must(t, e.sim.Write(lxcZFS, gib))
			snaps = append(snaps, takeDone(t, env, snapshots.Owner(), "river-elk", name))
		}
		_, err := env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "river-elk", Snapshot: snaps[0].ID})
		want := "pve-2 uses ZFS, which restores only the newest snapshot. Fork this one, or delete the 2 newer ones yourself first."
		if err == nil || err.Error() != want {
			t.Fatalf("restore to the oldest on ZFS: %v; want %q", err, want)
		}
		atThird := written(t, e, lxcZFS)
		must(t, e.sim.Write(lxcZFS, gib))
		restoreDone(t, env, "river-elk", snaps[2].ID)
		if got := written(t, e, lxcZFS); got != atThird {
			t.Fatalf("after the restore to the newest: %d written, want %d", got, atThird)
		}
		g, _ := e.sim.Guest(lxcZFS)
		if len(g.Snapshots) != 3 || !g.Running {
			t.Fatalf("after the ZFS restore: %d snapshots (want every one still there), running %v", len(g.Snapshots), g.Running)
		}
		// The held copy of the stopped guest: a template in boxsnap's range,
		// disarmed, holding what was written before the stop.
		var copyInfo *pvesim.GuestInfo
		for id := proxmox.DefaultVMIDFirst; id < proxmox.DefaultVMIDFirst+10; id++ {
			if gi, err := e.sim.Guest(id); err == nil {
				copyInfo = &gi
			}
		}
		if copyInfo == nil || !copyInfo.Template || copyInfo.OnBoot || !strings.Contains(copyInfo.Config["net0"], "link_down=1") {
			t.Fatalf("held copy: %+v", copyInfo)
		}
		if copyInfo.Written != atThird+gib {
			t.Fatalf("the held copy holds %d written, want %d", copyInfo.Written, atThird+gib)
		}

		// Undo is a swap (TestZFSUndoSwap checks the guests); the three
		// snapshots stay on the earlier guest, and with the records lost the
		// reconcile finds them there.
		op := lastOp(t, env, "river-elk")
		restoreDone(t, env, "river-elk", *op.UndoID)
		env.Stop()
		fresh := newCore(t, e, "", nil)
		rep, err := fresh.Sweeps.Reconcile(ctx)
		must(t, err)
		if rep.Kept+rep.Found+rep.Recorded != 3 {
			t.Fatalf("reconcile after the swap, records lost: %+v; want the earlier guest's 3", rep)
		}
		for _, sn := range snaps {
			got, _, err := fresh.Core.Snapshot(ctx, snapshots.Owner(), sn.ID)
			must(t, err)
			if got.Guest != "earlier" {
				t.Fatalf("%s found again on %q, want the earlier guest", sn.ID, got.Guest)
			}
		}
	})
}
