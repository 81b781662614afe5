package proxmox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers/proxmox"
)

func taskEnded(t *testing.T, e *simEnv, upid string) func() bool {
	return func() bool {
		tasks, err := e.sim.Tasks("pve-1")
		must(t, err)
		for _, task := range tasks {
			if task.UPID == upid {
				return !task.Running
			}
		}
		return false
	}
}

func scan(t *testing.T, env *coretest.Env) snapshots.OutsideReport {
	t.Helper()
	rep, err := env.Core.Sweeps().ScanOutside(context.Background())
	must(t, err)
	return rep
}

func counts(t *testing.T, env *coretest.Env) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, ev := range boxLog(t, env, "amber-fox") {
		out[ev.Kind]++
	}
	return out
}

// TestOutsideRestore: restores made outside boxsnap are read from the node's
// task list and logged by their status: an outside take, delete, two restores
// to one parent, a failed rollback, one still running at a sweep, several
// changes between sweeps; boxsnap's own tasks are never logged as outside;
// each task is logged once.
func TestOutsideRestore(t *testing.T) {
	t.Parallel()
	e := newSim(t, simOpts{durations: map[string]time.Duration{"vzrollback": 400 * time.Millisecond}})
	env := newCore(t, e, "", nil)
	adopt(t, env, "amber-fox", proxmox.KindLXC, lxcThin)
	mine := takeDone(t, env, snapshots.Owner(), "amber-fox", "mine")
	restoreDone(t, env, "amber-fox", mine.ID)
	if rep := scan(t, env); rep.Restored+rep.RestoreFailed+rep.RestoreRunning+rep.Changed != 0 {
		t.Fatalf("boxsnap's own take and restore were logged as outside: %+v", rep)
	}

	// An outside take: its snapshots changed, no restore claimed.
	upid, err := e.sim.OutsideSnapshot(lxcThin, "manual", "")
	must(t, err)
	waitFor(t, "the outside take", taskEnded(t, e, upid))
	scan(t, env)
	scan(t, env) // logged once
	if c := counts(t, env); c[snapshots.EvChangedOutside] != 1 || c[snapshots.EvRestoredOutside] != 0 {
		t.Fatalf("after an outside take: %v", c)
	}

	// Two restores to one parent between sweeps: two restored-outside.
	for range 2 {
		upid, err := e.sim.OutsideRollback(lxcThin, "manual")
		must(t, err)
		waitFor(t, "the outside rollback", taskEnded(t, e, upid))
	}
	rep := scan(t, env)
	if rep.Restored != 2 {
		t.Fatalf("two outside rollbacks: %+v", rep)
	}

	// A rollback that fails: restore-outside-failed, never restored.
	e.sim.FailNextTask("vzrollback", lxcThin, "zfs error: could not find any snapshots to destroy; check snapshot names.")
	upid, err = e.sim.OutsideRollback(lxcThin, "manual")
	must(t, err)
	waitFor(t, "the failed rollback", taskEnded(t, e, upid))
	if rep := scan(t, env); rep.RestoreFailed != 1 || rep.Restored != 0 {
		t.Fatalf("a failed outside rollback: %+v", rep)
	}

	// Proxmox left lock=rollback after the failed task; the admin clears it.
	must(t, e.sim.Unlock(lxcThin))

	// One still running at a sweep: running, then restored once it ends.
	upid, err = e.sim.OutsideRollback(lxcThin, "manual")
	must(t, err)
	if rep := scan(t, env); rep.RestoreRunning != 1 || rep.Restored != 0 {
		t.Fatalf("a running outside rollback: %+v", rep)
	}
	if rep := scan(t, env); rep.RestoreRunning != 0 {
		t.Fatalf("a running rollback was logged twice: %+v", rep)
	}
	waitFor(t, "the running rollback", taskEnded(t, e, upid))
	if rep := scan(t, env); rep.Restored != 1 {
		t.Fatalf("the rollback that was running, now ended: %+v", rep)
	}

	// An outside delete: its snapshots changed.
	upid, err = e.sim.OutsideDelete(lxcThin, "manual", false)
	must(t, err)
	waitFor(t, "the outside delete", taskEnded(t, e, upid))
	scan(t, env)
	c := counts(t, env)
	want := map[string]int{snapshots.EvChangedOutside: 2, snapshots.EvRestoredOutside: 3, snapshots.EvRestoreOutsideFailed: 1, snapshots.EvRestoreOutsideRun: 1}
	for k, n := range want {
		if c[k] != n {
			t.Fatalf("box log %v; want %v", c, want)
		}
	}
	for _, ev := range boxLog(t, env, "amber-fox") {
		if ev.Kind == snapshots.EvRestoredOutside && (!strings.Contains(ev.Words, "vzrollback") || !strings.Contains(ev.Words, "root@pam") || !strings.Contains(ev.Words, "ended OK")) {
			t.Fatalf("restored-outside words %q: the task, its user, time and status", ev.Words)
		}
	}
}
