package proxmox_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/sweeps"
	"github.com/boxsnap/boxsnap/providers/proxmox"
)

// finishAfterKill kills the worker while op's job snoozes at step on its
// running Proxmox task of taskType, starts a new one, and waits for op to
// end done; it answers op as it ended.
func (s *snoozeEnv) finishAfterKill(t *testing.T, op *snapshots.Operation, step, taskType string) *snapshots.Operation {
	t.Helper()
	upid := s.snoozedAt(t, op.ID, step, taskType)
	s.w.kill()
	if !taskRunningOn(t, s.e, upid) {
		t.Fatalf("the %s task ended before the worker was killed: the test shows no resume from the task", taskType)
	}
	s.restart(t)
	s.end(t, upid)
	got := s.env.Wait(t, op)
	if got.State != snapshots.OpDone {
		log, _ := os.ReadFile(s.w.log)
		t.Fatalf("after the kill the %s ended %s at %s: %q\n%s", op.Kind, got.State, got.Step, deref(got.Error), log)
	}
	waitFor(t, "the "+taskType+" task to end", func() bool { return !taskRunningOn(t, s.e, upid) })
	return got
}

// TestDeleteHistorySnoozesOnItsDeletes: Delete history (and thinning, which
// runs the same way) leaves each automatic snapshot's Proxmox delete task to
// the job's snooze; the worker is killed while it snoozes on the first, and a
// new one goes on from that task: every automatic snapshot is gone, the
// person's stays, one delete task ran for each, and the box log says "2
// automatic snapshots deleted".
func TestDeleteHistorySnoozesOnItsDeletes(t *testing.T) {
	t.Parallel()
	s := newSnoozeEnv(t, nil, false)
	ctx := context.Background()
	b := adopt(t, s.env, "amber-fox", proxmox.KindLXC, lxcThin)
	mine := takeDone(t, s.env, snapshots.Owner(), "amber-fox", "the person's")
	var auto []string
	for i := 0; i < 2; i++ {
		op, sn, err := s.env.Take.TakeAutomatic(ctx, b.ID, "the box changed")
		must(t, err)
		if got := s.env.Wait(t, op); got.State != snapshots.OpDone {
			t.Fatalf("automatic take: %s %q", got.State, deref(got.Error))
		}
		auto = append(auto, sn.ID)
	}
	before := tasksOf(t, s.e, lxcThin)["vzdelsnapshot"]

	s.e.sim.StallNextTask("vzdelsnapshot", lxcThin)
	op, err := s.env.Keeps.DeleteHistory(ctx, snapshots.Owner(), "amber-fox", "amber-fox", "")
	must(t, err)
	s.finishAfterKill(t, op, snapshots.StepDelete, "vzdelsnapshot")

	if n := tasksOf(t, s.e, lxcThin)["vzdelsnapshot"] - before; n != 2 {
		t.Errorf("Proxmox ran %d delete tasks for 2 automatic snapshots, want 2 (one each)", n)
	}
	for _, id := range auto {
		if st := snapshotState(t, s.env, id); st != "gone" {
			t.Errorf("automatic snapshot %s is %s after Delete history, want gone", id, st)
		}
	}
	if st := snapshotState(t, s.env, mine.ID); st != snapshots.StateReady {
		t.Errorf("the person's snapshot is %s after Delete history, want ready", st)
	}
	g, err := s.e.sim.Guest(lxcThin)
	must(t, err)
	if len(g.Snapshots) != 1 {
		t.Errorf("Proxmox holds %d snapshots after Delete history, want the person's only", len(g.Snapshots))
	}
	said := false
	for _, ev := range boxLog(t, s.env, "amber-fox") {
		if ev.Kind == snapshots.EvHistoryDeleted {
			said = strings.HasPrefix(ev.Words, "2 automatic snapshots deleted")
			if !said {
				t.Errorf("the box log says %q", ev.Words)
			}
		}
	}
	if !said {
		t.Error("no history-deleted event in the box log")
	}
}

// TestRoomSweepSnoozesOnItsDelete: the room sweep's delete is an operation of
// its own, run by a worker, whose Proxmox delete task is left to the job's
// snooze; the worker is killed while it snoozes, and a new one goes on from
// that task. The agent's snapshot is gone, with one delete task, the person's
// stays, the box log says "by boxsnap: pve-1's storage was 93% full", and the
// sweep reports the delete.
func TestRoomSweepSnoozesOnItsDelete(t *testing.T) {
	t.Parallel()
	s := newSnoozeEnv(t, nil, false)
	ctx := context.Background()
	th, agent, _ := s.env.Thread(t, "Fix the sign-in flow")
	if _, err := s.env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "amber-fox", Kind: proxmox.KindLXC,
		Backend: "pve-lab", Adopt: itoa(lxcThin), Thread: th.ID}); err != nil {
		t.Fatal(err)
	}
	old := takeDone(t, s.env, agent, "amber-fox", "oldest")
	mine := takeDone(t, s.env, snapshots.Owner(), "amber-fox", "the person's")
	before := tasksOf(t, s.e, lxcThin)["vzdelsnapshot"]
	must(t, s.e.sim.FillStorage("pve-1", "local-lvm", 93))
	s.e.sim.StallNextTask("vzdelsnapshot", lxcThin)

	type swept struct {
		rep sweeps.RoomReport
		err error
	}
	done := make(chan swept, 1)
	go func() {
		rep, err := s.env.Sweeps.RoomSweep(ctx)
		done <- swept{rep, err}
	}()
	var opID string
	waitFor(t, "the room sweep's delete admitted", func() bool {
		err := s.pool.QueryRow(ctx, `SELECT id FROM operations WHERE kind = $1 AND target = $2`, snapshots.OpDelete, old.ID).Scan(&opID)
		return err == nil
	})
	op, err := s.env.Core.Operation(ctx, snapshots.Owner(), opID)
	must(t, err)
	s.finishAfterKill(t, op, snapshots.StepDelete, "vzdelsnapshot")
	var got swept
	select {
	case got = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the room sweep did not return 20 s after its delete ended")
	}
	must(t, got.err)
	if len(got.rep.Deleted) != 1 || got.rep.Deleted[0] != old.ID {
		t.Fatalf("the room sweep reports %v deleted, want the agent's %s", got.rep.Deleted, old.ID)
	}
	if n := tasksOf(t, s.e, lxcThin)["vzdelsnapshot"] - before; n != 1 {
		t.Errorf("Proxmox ran %d delete tasks for the room sweep's one delete, want 1", n)
	}
	if st := snapshotState(t, s.env, old.ID); st != "gone" {
		t.Errorf("the agent's snapshot is %s after the room sweep, want gone", st)
	}
	if st := snapshotState(t, s.env, mine.ID); st != snapshots.StateReady {
		t.Errorf("the person's snapshot is %s after the room sweep, want ready", st)
	}
	said := false
	for _, ev := range boxLog(t, s.env, "amber-fox") {
		if ev.Kind == snapshots.EvSnapshotDeleted && strings.Contains(ev.Words, "by boxsnap: pve-1's storage was 93% full") {
			said = true
		}
	}
	if !said {
		t.Error("no snapshot-deleted with “by boxsnap: pve-1's storage was 93% full”")
	}
}

// TestTrashSnoozesOnItsStopAndStart: a release into the trash leaves its
// guest's stop task to the job's snooze, and a restore from the trash its
// start task; the worker is killed while each snoozes, and a new one goes on
// from that task. The box is in the trash with its guest stopped, then ready
// with its guest running, and Proxmox ran one stop task and one start task.
func TestTrashSnoozesOnItsStopAndStart(t *testing.T) {
	t.Parallel()
	// Each task the test watches runs until the test has seen the job
	// snooze on it (StallNextTask); every other task takes the simulator's
	// default time, so a second stop or start would end, and be counted.
	s := newSnoozeEnv(t, nil, false)
	ctx := context.Background()
	b := adopt(t, s.env, "amber-fox", proxmox.KindLXC, lxcThin)
	before := tasksOf(t, s.e, lxcThin)

	s.e.sim.StallNextTask("vzstop", lxcThin)
	op, err := s.env.Boxes.ReleaseBox(ctx, snapshots.Owner(), b.Name, "")
	must(t, err)
	s.finishAfterKill(t, op, snapshots.StepInert, "vzstop")
	if g, _ := s.e.sim.Guest(lxcThin); g.Running {
		t.Fatal("the guest runs after its box went to the trash")
	}
	nb, err := s.env.Core.Box(ctx, snapshots.Owner(), b.Name)
	must(t, err)
	if nb.State != snapshots.BoxTrashed {
		t.Fatalf("the box is %s after its release into the trash, want %s", nb.State, snapshots.BoxTrashed)
	}

	s.e.sim.StallNextTask("vzstart", lxcThin)
	op, err = s.env.Boxes.RestoreFromTrash(ctx, snapshots.Owner(), b.Name, "")
	must(t, err)
	s.finishAfterKill(t, op, snapshots.StepInert, "vzstart")
	if g, _ := s.e.sim.Guest(lxcThin); !g.Running {
		t.Fatal("the guest does not run after its box came back from the trash")
	}
	nb, err = s.env.Core.Box(ctx, snapshots.Owner(), b.Name)
	must(t, err)
	if nb.State != snapshots.BoxReady {
		t.Fatalf("the box is %s after its restore from the trash, want %s", nb.State, snapshots.BoxReady)
	}
	after := tasksOf(t, s.e, lxcThin)
	for _, typ := range []string{"vzstop", "vzstart"} {
		if n := after[typ] - before[typ]; n != 1 {
			t.Errorf("Proxmox ran %d %s tasks, want 1", n, typ)
		}
	}
}

// TestReleaseAndDeleteItSnoozesOnItsDelete: the person's "Release and delete
// it" leaves each kept snapshot's Proxmox delete task to the job's snooze;
// the worker is killed while it snoozes, and a new one goes on from that
// task. The kept snapshot is gone with one delete task, the box log says it
// went "at the person's word", and the box is released.
func TestReleaseAndDeleteItSnoozesOnItsDelete(t *testing.T) {
	t.Parallel()
	s := newSnoozeEnv(t, nil, false)
	ctx := context.Background()
	b := adopt(t, s.env, "amber-fox", proxmox.KindLXC, lxcThin)
	kept := keepDone(t, s.env, "amber-fox", takeDone(t, s.env, snapshots.Owner(), "amber-fox", "kept").ID)
	before := tasksOf(t, s.e, lxcThin)["vzdelsnapshot"]

	s.e.sim.StallNextTask("vzdelsnapshot", lxcThin)
	op, err := s.env.Boxes.ReleaseBoxDeletingKept(ctx, snapshots.Owner(), b.Name, "")
	must(t, err)
	s.finishAfterKill(t, op, snapshots.StepUnkeepDelete, "vzdelsnapshot")
	if n := tasksOf(t, s.e, lxcThin)["vzdelsnapshot"] - before; n != 1 {
		t.Errorf("Proxmox ran %d delete tasks for the kept snapshot, want 1", n)
	}
	if st := snapshotState(t, s.env, kept.ID); st != "gone" {
		t.Errorf("the kept snapshot is %s after Release and delete it, want gone", st)
	}
	if _, err := s.e.sim.Guest(lxcThin); err == nil {
		t.Error("the released guest is still on Proxmox")
	}
	n := 0
	for _, ev := range boxLog(t, s.env, "amber-fox") {
		if ev.Kind == snapshots.EvSnapshotDeleted && strings.Contains(ev.Words, "‘kept’") {
			n++
			if !strings.Contains(ev.Words, "at the person's word") {
				t.Errorf("the box log says %q", ev.Words)
			}
		}
	}
	if n != 1 {
		t.Errorf("the box log tells the kept snapshot's delete %d times, want once", n)
	}
}
