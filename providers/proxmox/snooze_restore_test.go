package proxmox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers/proxmox"
)

// snoozeEnv is a simulator, a database, this process's core (which admits
// and reads, and runs no jobs) and a worker process (which runs them).
type snoozeEnv struct {
	e    *simEnv
	env  *coretest.Env
	pool *pgxpool.Pool
	dsn  string
	root string
	zfs  bool // the ZFS order's switch is on, in both processes
	w    *worker
}

func newSnoozeEnv(t *testing.T, durations map[string]time.Duration, zfs bool) *snoozeEnv {
	t.Helper()
	e := newSim(t, simOpts{durations: durations, zfsOn: zfs})
	// This process admits; the worker processes run.
	env, pool, dsn, root := workerCore(t, e)
	s := &snoozeEnv{e: e, env: env, pool: pool, dsn: dsn, root: root, zfs: zfs}
	s.restart(t)
	return s
}

// restart starts a worker process (after a kill, a new one).
func (s *snoozeEnv) restart(t *testing.T) {
	t.Helper()
	s.restartWith(t)
}

// restartWith is restart with more of the worker's variables.
func (s *snoozeEnv) restartWith(t *testing.T, env ...string) {
	t.Helper()
	if s.zfs {
		env = append(env, workerZFS+"=1")
	}
	s.w = startWorker(t, s.e, s.dsn, s.root, env...)
}

// snoozedAt waits until op's job has snoozed at step on its own running
// Proxmox task of taskType: the task recorded and waited for, River's job
// snoozed (available or scheduled, its snoozes counted), and no advisory
// lock held in the test's database (no worker holds the operation). It
// answers the task's UPID.
func (s *snoozeEnv) snoozedAt(t *testing.T, op, step, taskType string) string {
	t.Helper()
	ctx := context.Background()
	var upid string
	waitFor(t, "the job snoozed at "+step+" on its running "+taskType+" task, with no lock held", func() bool {
		var waiting, prior bool
		var task, at, state string
		var locks, snoozes int
		err := s.pool.QueryRow(ctx, `SELECT o.task_waiting, coalesce(o.task->>'id', ''), coalesce((o.task->>'prior')::bool, false), o.step,
				(SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND a.application_name <> 'boxsnap presence' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())),
				j.state::text, coalesce((j.metadata->>'snoozes')::int, 0)
			FROM operations o JOIN river_job j ON j.args->>'op' = o.id AND (j.args->>'resume')::int = o.resumes
			WHERE o.id = $1`, op).Scan(&waiting, &task, &prior, &at, &locks, &state, &snoozes)
		must(t, err)
		if !waiting || prior || at != step || locks != 0 || snoozes < 1 || (state != "available" && state != "scheduled") ||
			!strings.Contains(task, ":"+taskType+":") {
			return false
		}
		upid = task
		return taskRunningOn(t, s.e, upid)
	})
	return upid
}

// end finishes a task the test stalled (pvesim's StallNextTask) once it
// has seen what it waited for while the task ran.
func (s *snoozeEnv) end(t *testing.T, upid string) {
	t.Helper()
	if err := s.e.sim.FinishTask(upid); err != nil {
		var seen strings.Builder
		if tasks, terr := s.e.sim.Tasks(strings.Split(upid, ":")[1]); terr == nil {
			for _, tk := range tasks {
				fmt.Fprintf(&seen, "  %s running=%v exit=%q start=%s\n", tk.UPID, tk.Running, tk.ExitStatus, tk.Start.Format("15:04:05.000"))
			}
		}
		log, _ := os.ReadFile(s.w.log)
		t.Fatalf("%v; the node's tasks, newest first:\n%sthe worker's log:\n%s", err, seen.String(), log)
	}
}

// taskRunningOn reports whether a task runs still on the node its UPID
// names ("UPID:pve-2:...").
func taskRunningOn(t *testing.T, e *simEnv, upid string) bool {
	t.Helper()
	parts := strings.Split(upid, ":")
	if len(parts) < 2 {
		return false
	}
	tasks, err := e.sim.Tasks(parts[1])
	must(t, err)
	for _, tk := range tasks {
		if tk.UPID == upid {
			return tk.Running
		}
	}
	return false
}

// tasksOf counts the Proxmox tasks of each type pve-1 ran on a guest.
func tasksOf(t *testing.T, e *simEnv, vmid int) map[string]int {
	t.Helper()
	return tasksOn(t, e, "pve-1", vmid)
}

// tasksOn counts the Proxmox tasks of each type a node ran on a guest.
func tasksOn(t *testing.T, e *simEnv, node string, vmid int) map[string]int {
	t.Helper()
	tasks, err := e.sim.Tasks(node)
	must(t, err)
	n := map[string]int{}
	for _, tk := range tasks {
		if tk.ID == itoa(vmid) {
			n[tk.Type]++
		}
	}
	return n
}

// TestRestoreSnoozesOnItsProviderTasks: a restore on Proxmox snoozes on each
// of its steps' tasks, the stop, the undo, the rollback and the start, each
// recorded on the operation while no worker holds it; the worker process is
// killed while the job snoozes on the rollback, and a new one resumes from
// the task. The restore ends done, the box is at its snapshot and running,
// each task ran once (none was started again by a resume), and the box log
// tells the restore once.
func TestRestoreSnoozesOnItsProviderTasks(t *testing.T) {
	t.Parallel()
	s := newSnoozeEnv(t, nil, false)
	ctx := context.Background()
	adopt(t, s.env, "amber-fox", proxmox.KindLXC, lxcThin)
	must(t, s.e.sim.Write(lxcThin, gib))
	target := takeDone(t, s.env, snapshots.Owner(), "amber-fox", "target")
	atTarget := written(t, s.e, lxcThin)
	must(t, s.e.sim.Write(lxcThin, 2*gib))
	before := tasksOf(t, s.e, lxcThin)
	// Each task runs until the test has seen the job snooze on it.
	for _, typ := range []string{"vzstop", "vzsnapshot", "vzrollback", "vzstart"} {
		s.e.sim.StallNextTask(typ, lxcThin)
	}

	op, err := s.env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "amber-fox", Snapshot: target.ID})
	must(t, err)
	s.end(t, s.snoozedAt(t, op.ID, "stop", "vzstop"))
	s.end(t, s.snoozedAt(t, op.ID, "undo", "vzsnapshot"))
	upid := s.snoozedAt(t, op.ID, "rollback", "vzrollback")
	s.w.kill()
	if !taskRunning(t, s.e, upid) {
		t.Fatal("the rollback's task ended before the worker was killed: the test shows no resume from the task")
	}
	s.restart(t)
	s.end(t, upid)
	s.end(t, s.snoozedAt(t, op.ID, "start", "vzstart"))

	got := s.env.Wait(t, op)
	if got.State != snapshots.OpDone {
		log, _ := os.ReadFile(s.w.log)
		t.Fatalf("the restore ended %s at %s: %q\n%s", got.State, got.Step, deref(got.Error), log)
	}
	if n := written(t, s.e, lxcThin); n != atTarget {
		t.Fatalf("restored: %d written, want %d", n, atTarget)
	}
	if g, _ := s.e.sim.Guest(lxcThin); !g.Running || g.Lock != "" {
		t.Fatalf("after the restore: running %v lock %q", g.Running, g.Lock)
	}
	after := tasksOf(t, s.e, lxcThin)
	for _, typ := range []string{"vzstop", "vzsnapshot", "vzrollback", "vzstart"} {
		if n := after[typ] - before[typ]; n != 1 {
			t.Errorf("Proxmox ran %d %s tasks for the restore, want 1", n, typ)
		}
	}
	if got.UndoID == nil {
		t.Fatal("the restore has no undo")
	}
	undo, _, err := s.env.Core.Snapshot(ctx, snapshots.Owner(), *got.UndoID)
	must(t, err)
	if undo.State != snapshots.StateReady {
		t.Fatalf("the undo is %s, want ready", undo.State)
	}
	var asked, restored int
	must(t, s.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE kind = $2), count(*) FILTER (WHERE kind = $3)
		FROM box_log WHERE operation_id = $1`, op.ID, snapshots.EvRestoreAsked, snapshots.EvRestored).Scan(&asked, &restored))
	if asked != 1 || restored != 1 {
		t.Fatalf("the box log tells the restore asked %d times and done %d times, want once each", asked, restored)
	}
}

// TestRestoreSnoozedTaskFailsInProxmoxWords: a restore whose rollback task
// fails while its job snoozes on it asks once more, in place, and fails in
// Proxmox's words (the failed rollback's own, and the lock it left), with
// what boxsnap observed.
func TestRestoreSnoozedTaskFailsInProxmoxWords(t *testing.T) {
	t.Parallel()
	s := newSnoozeEnv(t, nil, false)
	ctx := context.Background()
	adopt(t, s.env, "amber-fox", proxmox.KindLXC, lxcThin)
	target := takeDone(t, s.env, snapshots.Owner(), "amber-fox", "target")
	const words = "lvconvert 'pve/vm-214-disk-0' error: Logical volume is busy"
	s.e.sim.FailNextTask("vzrollback", lxcThin, words)
	s.e.sim.StallNextTask("vzrollback", lxcThin)

	op, err := s.env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "amber-fox", Snapshot: target.ID})
	must(t, err)
	s.end(t, s.snoozedAt(t, op.ID, "rollback", "vzrollback"))
	got := s.env.Wait(t, op)
	if got.State != snapshots.OpFailed {
		t.Fatalf("the restore whose rollback failed ended %s", got.State)
	}
	if !strings.Contains(deref(got.Error), words) || !strings.Contains(deref(got.Error), "locked (rollback)") {
		t.Fatalf("the restore failed in other words: %q", deref(got.Error))
	}
	// The guest is left locked: the undo cannot put the files back, nor
	// can the box start, and the words say both.
	if o := deref(got.Observed); !strings.HasPrefix(o, "the files may be part way to the snapshot's: putting them back from the undo failed: locked (rollback)") ||
		!strings.Contains(o, "; the box is stopped: starting it failed: locked (rollback)") {
		t.Fatalf("observed %q", o)
	}
	var failed string
	must(t, s.pool.QueryRow(ctx, `SELECT words FROM box_log WHERE operation_id = $1 AND kind = $2`, op.ID, snapshots.EvRestoreFailed).Scan(&failed))
	if !strings.Contains(failed, "stopped at rollback") || !strings.Contains(failed, words) {
		t.Fatalf("the box log says %q", failed)
	}
}

// TestReleaseSnoozesOnItsProviderTasks: a release into the trash snoozes on
// its final snapshot's task; emptying the trash snoozes on its kept
// snapshot's held copy's clone, on each unkept snapshot's delete task and on
// the guest's destroy, each recorded while no worker holds the operation. The
// worker is killed while the job snoozes on the clone, and a new one goes on
// with the copy that clone made: the guest and its unkept snapshots are gone,
// the kept one is a held copy, and each task ran once.
func TestReleaseSnoozesOnItsProviderTasks(t *testing.T) {
	t.Parallel()
	s := newSnoozeEnv(t, nil, false)
	ctx := context.Background()
	b := adopt(t, s.env, "amber-fox", proxmox.KindLXC, lxcThin)
	kept := keepDone(t, s.env, "amber-fox", takeDone(t, s.env, snapshots.Owner(), "amber-fox", "a").ID)

	s.e.sim.StallNextTask("vzsnapshot", lxcThin)
	op, err := s.env.Boxes.ReleaseBox(ctx, snapshots.Owner(), b.Name, "")
	must(t, err)
	s.end(t, s.snoozedAt(t, op.ID, "final", "vzsnapshot"))
	if got := s.env.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("the release into the trash ended %s: %q", got.State, deref(got.Error))
	}
	entry, err := s.env.Boxes.TrashOf(ctx, snapshots.Owner(), b.Name)
	must(t, err)
	if entry.Final == nil {
		t.Fatalf("no final snapshot: %q", entry.FinalWords)
	}

	for _, typ := range []string{"vzclone", "vzdelsnapshot", "vzdestroy"} {
		s.e.sim.StallNextTask(typ, lxcThin)
	}
	empty, err := s.env.Boxes.EmptyTrash(ctx, snapshots.Owner(), b.Name, "")
	must(t, err)
	upid := s.snoozedAt(t, empty.ID, "copy-clone", "vzclone")
	s.w.kill()
	if !taskRunning(t, s.e, upid) {
		t.Fatal("the clone's task ended before the worker was killed: the test shows no resume from the task")
	}
	s.restart(t)
	s.end(t, upid)
	s.end(t, s.snoozedAt(t, empty.ID, "delete", "vzdelsnapshot"))
	s.end(t, s.snoozedAt(t, empty.ID, "release", "vzdestroy"))
	got := s.env.Wait(t, empty)
	if got.State != snapshots.OpDone {
		log, _ := os.ReadFile(s.w.log)
		t.Fatalf("emptying the trash ended %s at %s: %q\n%s", got.State, got.Step, deref(got.Error), log)
	}
	if _, err := s.e.sim.Guest(lxcThin); err == nil {
		t.Fatal("the released guest is still on Proxmox")
	}
	n := tasksOf(t, s.e, lxcThin)
	if n["vzclone"] != 1 || n["vzdelsnapshot"] != 1 || n["vzdestroy"] != 1 {
		t.Fatalf("Proxmox ran %d clones, %d snapshot deletes and %d destroys, want one each", n["vzclone"], n["vzdelsnapshot"], n["vzdestroy"])
	}
	var left int
	must(t, s.pool.QueryRow(ctx, "SELECT count(*) FROM snapshots WHERE box_id = $1 AND id <> $2", b.ID, kept.ID).Scan(&left))
	if left != 0 {
		t.Fatalf("%d unkept snapshot records of the released box are left", left)
	}
	sn, _, err := s.env.Core.Snapshot(ctx, snapshots.Owner(), kept.ID)
	must(t, err)
	if sn.Guest != "held-copy" || sn.State != snapshots.StateReady || sn.GuestRef == nil {
		t.Fatalf("the kept snapshot after the release: %s, %s; want a ready held copy", sn.Guest, sn.State)
	}
	var vmid int
	must(t, json.Unmarshal([]byte(*sn.GuestRef), &vmid))
	if g, err := s.e.sim.Guest(vmid); err != nil || !g.Template {
		t.Fatalf("the held copy %d: %+v %v; want a template", vmid, g, err)
	}
}

// TestZFSRestoreSnoozesOnItsHeldCopy: a restore in the ZFS order snoozes on
// its undo's held copy's clone and on its rollback; the worker is killed
// while the job snoozes on the clone, and a new one goes on with the copy
// that clone made, never cloning again: the box is at its snapshot, and its
// undo is the held copy.
func TestZFSRestoreSnoozesOnItsHeldCopy(t *testing.T) {
	t.Parallel()
	s := newSnoozeEnv(t, nil, true)
	ctx := context.Background()
	adopt(t, s.env, "river-elk", proxmox.KindLXC, lxcZFS)
	must(t, s.e.sim.Write(lxcZFS, gib))
	target := takeDone(t, s.env, snapshots.Owner(), "river-elk", "target")
	atTarget := written(t, s.e, lxcZFS)
	must(t, s.e.sim.Write(lxcZFS, 2*gib))
	s.e.sim.StallNextTask("vzclone", lxcZFS)
	s.e.sim.StallNextTask("vzrollback", lxcZFS)

	op, err := s.env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "river-elk", Snapshot: target.ID})
	must(t, err)
	upid := s.snoozedAt(t, op.ID, "copy-clone", "vzclone")
	s.w.kill()
	if !taskRunningOn(t, s.e, upid) {
		t.Fatal("the clone's task ended before the worker was killed: the test shows no resume from the task")
	}
	s.restart(t)
	s.end(t, upid)
	s.end(t, s.snoozedAt(t, op.ID, "rollback", "vzrollback"))
	got := s.env.Wait(t, op)
	if got.State != snapshots.OpDone {
		log, _ := os.ReadFile(s.w.log)
		t.Fatalf("the ZFS restore ended %s at %s: %q\n%s", got.State, got.Step, deref(got.Error), log)
	}
	if n := written(t, s.e, lxcZFS); n != atTarget {
		t.Fatalf("restored: %d written, want %d", n, atTarget)
	}
	if n := tasksOn(t, s.e, "pve-2", lxcZFS); n["vzclone"] != 1 || n["vzrollback"] != 1 {
		t.Fatalf("Proxmox ran %d clones and %d rollbacks for the restore, want one each", n["vzclone"], n["vzrollback"])
	}
	if got.UndoID == nil {
		t.Fatal("the restore has no undo")
	}
	undo, _, err := s.env.Core.Snapshot(ctx, snapshots.Owner(), *got.UndoID)
	must(t, err)
	if undo.Guest != "held-copy" || undo.State != snapshots.StateReady {
		t.Fatalf("the undo: %s, %s; want a ready held copy", undo.Guest, undo.State)
	}
}

// TestForkSnoozesOnItsProviderTasks: a fork on Proxmox snoozes on its clone's
// task and on its start's, each recorded while no worker holds the operation;
// the worker is killed while the job snoozes on the clone, and a new one goes
// on with the guest that clone made: the fork is running, and Proxmox cloned
// once.
func TestForkSnoozesOnItsProviderTasks(t *testing.T) {
	t.Parallel()
	s := newSnoozeEnv(t, nil, false)
	ctx := context.Background()
	adopt(t, s.env, "amber-fox", proxmox.KindLXC, lxcThin)
	sn := takeDone(t, s.env, snapshots.Owner(), "amber-fox", "a")
	s.e.sim.StallNextTask("vzclone", lxcThin)
	s.e.sim.StallNextTask("vzstart", 0) // the fork's own guest, not known yet

	op, err := s.env.Forks.Fork(ctx, snapshots.Owner(), fork.ForkRequest{Box: "amber-fox", Snapshot: sn.ID, Name: "amber-twin"})
	must(t, err)
	upid := s.snoozedAt(t, op.ID, "fork", "vzclone")
	s.w.kill()
	if !taskRunning(t, s.e, upid) {
		t.Fatal("the clone's task ended before the worker was killed: the test shows no resume from the task")
	}
	s.restart(t)
	s.end(t, upid)
	s.end(t, s.snoozedAt(t, op.ID, "start", "vzstart"))
	got := s.env.Wait(t, op)
	if got.State != snapshots.OpDone {
		log, _ := os.ReadFile(s.w.log)
		t.Fatalf("the fork ended %s at %s: %q\n%s", got.State, got.Step, deref(got.Error), log)
	}
	twin, err := s.env.Core.Box(ctx, snapshots.Owner(), "amber-twin")
	must(t, err)
	var vmid int
	must(t, json.Unmarshal([]byte(twin.GuestRef), &vmid))
	g, err := s.e.sim.Guest(vmid)
	must(t, err)
	if !g.Running || !g.OnBoot {
		t.Fatalf("the fork's guest %d: running %v onboot %v, want both", vmid, g.Running, g.OnBoot)
	}
	if n := tasksOf(t, s.e, lxcThin)["vzclone"]; n != 1 {
		t.Fatalf("Proxmox cloned %d times for the fork, want once", n)
	}
	if n := tasksOf(t, s.e, vmid)["vzstart"]; n != 1 {
		t.Fatalf("Proxmox started the fork %d times, want once", n)
	}
}

// TestReplaceSnoozesOnItsDelete: a delete a step makes inside another
// operation snoozes too. The test covers a restore's oldest undo, replaced
// once the box holds a third, and an agent's sixth take's oldest. Each is
// left to the job's snooze on its Proxmox delete task. The worker is killed
// there, and the step, resumed, finishes it. The box then holds 2 undos, or 5
// snapshots, none deleting, and one delete task ran for each.
func TestReplaceSnoozesOnItsDelete(t *testing.T) {
	t.Parallel()
	s := newSnoozeEnv(t, nil, false)
	ctx := context.Background()
	th, agent, _ := s.env.Thread(t, "Fix the sign-in flow")
	b, err := s.env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "amber-fox", Kind: proxmox.KindLXC,
		Backend: "pve-lab", Adopt: itoa(lxcThin), Thread: th.ID})
	must(t, err)
	countOf := func() snapshots.Counts {
		t.Helper()
		list, err := s.env.Core.List(ctx, snapshots.Owner(), snapshots.ListQuery{Box: b.Name})
		must(t, err)
		for _, sn := range list[0].Snapshots {
			if sn.State != snapshots.StateReady {
				t.Fatalf("‘%s’ is %s", sn.Name, sn.State)
			}
		}
		return snapshots.CountOf(list[0].Snapshots)
	}
	// finish waits for op after a kill while it snoozed at step on its
	// delete task, and answers how many delete tasks ran meanwhile.
	finish := func(op *snapshots.Operation, step string) int {
		t.Helper()
		before := tasksOf(t, s.e, lxcThin)["vzdelsnapshot"]
		upid := s.snoozedAt(t, op.ID, step, "vzdelsnapshot")
		s.w.kill()
		if !taskRunning(t, s.e, upid) {
			t.Fatal("the delete's task ended before the worker was killed: the test shows no resume from the task")
		}
		s.restart(t)
		s.end(t, upid)
		if got := s.env.Wait(t, op); got.State != snapshots.OpDone {
			t.Fatalf("after the kill the operation ended %s at %s: %s", got.State, got.Step, deref(got.Error))
		}
		waitFor(t, "the delete's task to end", func() bool { return !taskRunning(t, s.e, upid) })
		return tasksOf(t, s.e, lxcThin)["vzdelsnapshot"] - before
	}

	target := takeDone(t, s.env, agent, "amber-fox", "target")
	for i := 0; i < 2; i++ {
		op, err := s.env.Restores.Restore(ctx, agent, snapshots.RestoreRequest{Box: "amber-fox", Snapshot: target.ID, Replace: true})
		must(t, err)
		if got := s.env.Wait(t, op); got.State != snapshots.OpDone {
			t.Fatalf("restore %d: %s %s", i, got.State, deref(got.Error))
		}
	}
	s.e.sim.StallNextTask("vzdelsnapshot", lxcThin)
	op, err := s.env.Restores.Restore(ctx, agent, snapshots.RestoreRequest{Box: "amber-fox", Snapshot: target.ID, Replace: true})
	must(t, err)
	if n := finish(op, snapshots.StepUndos); n != 1 {
		t.Errorf("the undo's replace ran %d delete tasks, want 1", n)
	}
	if c := countOf(); c.Undos != snapshots.UndosPerBox {
		t.Errorf("after the third restore the box holds %d undos, want %d", c.Undos, snapshots.UndosPerBox)
	}

	for _, n := range []string{"b", "c", "d", "e"} {
		takeDone(t, s.env, agent, "amber-fox", n)
	}
	s.e.sim.StallNextTask("vzdelsnapshot", lxcThin)
	op, _, err = s.env.Take.Take(ctx, agent, taking.TakeRequest{Box: "amber-fox", Name: "f"})
	must(t, err)
	if n := finish(op, snapshots.StepLimit); n != 1 {
		t.Errorf("the limit ran %d delete tasks, want 1", n)
	}
	if c := countOf(); c.ToLimit != 5 {
		t.Errorf("after the sixth take the box holds %d toward the limit, want 5", c.ToLimit)
	}
}
