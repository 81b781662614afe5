package proxmox_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers/proxmox"
)

// swapped is a box on ZFS whose restore's undo, a held copy, was swapped
// in: its two snapshots live on its earlier guest, lxcZFS.
type swapped struct {
	s             *snoozeEnv
	box           *snapshots.Box
	first, newest *snapshots.Snapshot
	undo          *snapshots.Snapshot
	copyVMID      int
	before        int64 // what the box held before the restore
}

// newSwapped restores river-elk to its newest snapshot (its undo a held
// copy), and answers before the undo, with the copy's clone and destroy
// tasks stalled when stall is set.
func newSwapped(t *testing.T, stall bool) *swapped {
	t.Helper()
	s := newSnoozeEnv(t, nil, true)
	ctx := context.Background()
	w := &swapped{s: s, box: adopt(t, s.env, "river-elk", proxmox.KindLXC, lxcZFS)}
	must(t, s.e.sim.Write(lxcZFS, gib))
	w.first = takeDone(t, s.env, snapshots.Owner(), "river-elk", "first")
	must(t, s.e.sim.Write(lxcZFS, gib))
	w.newest = takeDone(t, s.env, snapshots.Owner(), "river-elk", "newest")
	must(t, s.e.sim.Write(lxcZFS, 2*gib))
	w.before = written(t, s.e, lxcZFS)
	op, err := s.env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "river-elk", Snapshot: w.newest.ID})
	must(t, err)
	got := s.env.Wait(t, op)
	if got.State != snapshots.OpDone || got.UndoID == nil {
		t.Fatalf("the restore ended %s with undo %v: %q", got.State, got.UndoID, deref(got.Error))
	}
	w.undo, _, err = s.env.Core.Snapshot(ctx, snapshots.Owner(), *got.UndoID)
	must(t, err)
	if w.undo.Guest != "held-copy" || w.undo.GuestRef == nil {
		t.Fatalf("the undo lives on %s; want a held copy", w.undo.Guest)
	}
	w.copyVMID, err = strconv.Atoi(*w.undo.GuestRef)
	must(t, err)
	if stall {
		s.e.sim.StallNextTask("vzclone", w.copyVMID)
		s.e.sim.StallNextTask("vzdestroy", w.copyVMID)
	}
	return w
}

// swap asks the undo, the swap.
func (w *swapped) swap(t *testing.T) *snapshots.Operation {
	t.Helper()
	op, err := w.s.env.Restores.Restore(context.Background(), snapshots.Owner(), snapshots.RestoreRequest{Box: "river-elk", Snapshot: w.undo.ID})
	must(t, err)
	return op
}

// swapDone runs the undo, the swap, to its end, done.
func (w *swapped) swapDone(t *testing.T) {
	t.Helper()
	if got := w.s.env.Wait(t, w.swap(t)); got.State != snapshots.OpDone {
		log, _ := os.ReadFile(w.s.w.log)
		t.Fatalf("the swap ended %s at %s: %q\n%s", got.State, got.Step, deref(got.Error), log)
	}
}

// snoozedOn is snoozedAt for the task of one guest, where the step runs
// tasks of the same type on several.
func (s *snoozeEnv) snoozedOn(t *testing.T, op, step, taskType string, vmid int) string {
	t.Helper()
	for {
		upid := s.snoozedAt(t, op, step, taskType)
		if strings.Contains(upid, ":"+taskType+":"+strconv.Itoa(vmid)+":") {
			return upid
		}
	}
}

// TestSwapSnoozesOnItsTasks: the undo of a ZFS restore, a swap, snoozes on
// its adoption's clone of the held copy and on the copy's delete once it is
// the box's guest, each recorded while no worker holds the operation; the
// worker is killed while the job snoozes on the clone, and a new one goes on
// with the guest that clone made, never cloning again. The box is on its new
// guest with what it held before the restore, Proxmox cloned and destroyed
// the copy once each, the copy's record goes, and the box log tells the
// restore and the copy's delete once each.
func TestSwapSnoozesOnItsTasks(t *testing.T) {
	t.Parallel()
	w := newSwapped(t, true)
	s, ctx := w.s, context.Background()
	op := w.swap(t)
	upid := s.snoozedAt(t, op.ID, "adopt", "vzclone")
	s.w.kill()
	if !taskRunningOn(t, s.e, upid) {
		t.Fatal("the adoption's clone ended before the worker was killed: the test shows no resume from the task")
	}
	s.restart(t)
	s.end(t, upid)
	s.end(t, s.snoozedAt(t, op.ID, snapshots.StepUndos, "vzdestroy"))
	got := s.env.Wait(t, op)
	if got.State != snapshots.OpDone {
		log, _ := os.ReadFile(s.w.log)
		t.Fatalf("the swap ended %s at %s: %q\n%s", got.State, got.Step, deref(got.Error), log)
	}
	nb, err := s.env.Core.Box(ctx, snapshots.Owner(), "river-elk")
	must(t, err)
	vmid, _ := strconv.Atoi(nb.GuestRef)
	if vmid == lxcZFS || vmid == w.copyVMID {
		t.Fatalf("after the swap the box is on %s; want a new guest", nb.GuestRef)
	}
	if n := written(t, s.e, vmid); n != w.before {
		t.Fatalf("the new guest holds %d written, want %d (what the box held before the restore)", n, w.before)
	}
	if n := tasksOn(t, s.e, "pve-2", w.copyVMID); n["vzclone"] != 1 || n["vzdestroy"] != 1 {
		t.Fatalf("Proxmox ran %d clones and %d destroys of the held copy, want one each", n["vzclone"], n["vzdestroy"])
	}
	if _, err := s.e.sim.Guest(w.copyVMID); err == nil {
		t.Fatal("the swapped-in held copy's template is still on Proxmox")
	}
	if snapshotState(t, s.env, w.undo.ID) != "gone" {
		t.Fatal("the swapped-in undo is still listed")
	}
	var restored, deleted int
	for _, e := range boxLog(t, s.env, "river-elk") {
		if e.OperationID == nil || *e.OperationID != op.ID {
			continue
		}
		switch e.Kind {
		case snapshots.EvRestored:
			restored++
		case snapshots.EvSnapshotDeleted:
			deleted++
		}
	}
	if restored != 1 || deleted != 1 {
		t.Fatalf("the box log tells the swap's restore %d times and its copy's delete %d times, want once each", restored, deleted)
	}
	if res, err := s.env.Restores.Kinds().Restore.Result(got); err != nil || len(res.Replaced) != 0 {
		t.Fatalf("the swap's result: %+v %v; it replaced no undo (the copy it swapped in is not one)", res, err)
	}
}

// TestEarlierGuestGoesWithItsLastSnapshot: an earlier guest is deleted when
// its last snapshot goes; after a swap, the delete of the last snapshot on
// the earlier guest releases that guest, its destroy left to the job's
// snooze; the worker is killed while it snoozes, and a new one finishes the
// delete: the earlier guest is gone, destroyed once, the snapshot's record
// goes, and the box log says so once.
func TestEarlierGuestGoesWithItsLastSnapshot(t *testing.T) {
	t.Parallel()
	w := newSwapped(t, false)
	s, ctx := w.s, context.Background()
	w.swapDone(t)
	del := func(sn *snapshots.Snapshot) *snapshots.Operation {
		op, err := s.env.Keeps.Delete(ctx, snapshots.Owner(), snapshots.DeleteRequest{Box: "river-elk", Snapshot: sn.ID})
		must(t, err)
		return op
	}
	if got := s.env.Wait(t, del(w.first)); got.State != snapshots.OpDone {
		t.Fatalf("the delete of %s ended %s: %q", w.first.Name, got.State, deref(got.Error))
	}
	if _, err := s.e.sim.Guest(lxcZFS); err != nil {
		t.Fatalf("the earlier guest went with a snapshot still on it: %v", err)
	}
	s.e.sim.StallNextTask("vzdestroy", lxcZFS)
	op := del(w.newest)
	upid := s.snoozedAt(t, op.ID, snapshots.StepDelete, "vzdestroy")
	s.w.kill()
	s.restart(t)
	s.end(t, upid)
	if got := s.env.Wait(t, op); got.State != snapshots.OpDone {
		log, _ := os.ReadFile(s.w.log)
		t.Fatalf("the delete of the last snapshot on the earlier guest ended %s at %s: %q\n%s", got.State, got.Step, deref(got.Error), log)
	}
	if _, err := s.e.sim.Guest(lxcZFS); err == nil {
		t.Fatal("the earlier guest is still on Proxmox with no snapshot left on it")
	}
	if n := tasksOn(t, s.e, "pve-2", lxcZFS); n["vzdestroy"] != 1 {
		t.Fatalf("Proxmox destroyed the earlier guest %d times, want once", n["vzdestroy"])
	}
	if snapshotState(t, s.env, w.newest.ID) != "gone" {
		t.Fatal("the last snapshot on the earlier guest is still listed")
	}
	said := 0
	for _, e := range boxLog(t, s.env, "river-elk") {
		if strings.Contains(e.Words, "earlier guest "+strconv.Itoa(lxcZFS)+", with no snapshot left on it") {
			said++
		}
	}
	if said != 1 {
		t.Fatalf("the box log says %d times that the earlier guest went, want once", said)
	}
}

// TestReleaseSnoozesOnItsEarlierGuest: a box's release deletes its earlier
// guest after its own, the earlier guest's destroy left to the job's snooze;
// the worker is killed while it snoozes, and a new one finishes the release:
// both guests are gone, the earlier one destroyed once, and no record of the
// box's snapshots is left.
func TestReleaseSnoozesOnItsEarlierGuest(t *testing.T) {
	t.Parallel()
	w := newSwapped(t, false)
	s, ctx := w.s, context.Background()
	w.swapDone(t)
	nb, err := s.env.Core.Box(ctx, snapshots.Owner(), "river-elk")
	must(t, err)
	rop, err := s.env.Boxes.ReleaseBox(ctx, snapshots.Owner(), "river-elk", "")
	must(t, err)
	if got := s.env.Wait(t, rop); got.State != snapshots.OpDone {
		t.Fatalf("the release into the trash ended %s: %q", got.State, deref(got.Error))
	}
	s.e.sim.StallNextTask("vzdestroy", lxcZFS)
	op, err := s.env.Boxes.EmptyTrash(ctx, snapshots.Owner(), "river-elk", "")
	must(t, err)
	upid := s.snoozedOn(t, op.ID, snapshots.StepRelease, "vzdestroy", lxcZFS)
	s.w.kill()
	s.restart(t)
	s.end(t, upid)
	if got := s.env.Wait(t, op); got.State != snapshots.OpDone {
		log, _ := os.ReadFile(s.w.log)
		t.Fatalf("emptying the trash ended %s at %s: %q\n%s", got.State, got.Step, deref(got.Error), log)
	}
	newVMID, _ := strconv.Atoi(nb.GuestRef)
	for _, vmid := range []int{lxcZFS, newVMID} {
		if _, err := s.e.sim.Guest(vmid); err == nil {
			t.Fatalf("guest %d is still on Proxmox after the release", vmid)
		}
	}
	if n := tasksOn(t, s.e, "pve-2", lxcZFS); n["vzdestroy"] != 1 {
		t.Fatalf("Proxmox destroyed the earlier guest %d times, want once", n["vzdestroy"])
	}
	var left int
	must(t, s.pool.QueryRow(ctx, "SELECT count(*) FROM snapshots WHERE box_id = $1", w.box.ID).Scan(&left))
	if left != 0 {
		t.Fatalf("%d snapshot records of the released box are left", left)
	}
}
