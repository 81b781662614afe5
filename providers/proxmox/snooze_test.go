package proxmox_test

import (
	"context"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/snapshots"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers/proxmox"
)

// TestTakeSnoozesOnItsProviderTask: while Proxmox takes the snapshot, the
// take's job snoozes with the task recorded and no worker holds its lock or a
// connection for it; the worker process is killed during the snooze, and a
// new one resumes from the task: the take ends done with its snapshot ready,
// and Proxmox ran one snapshot task.
func TestTakeSnoozesOnItsProviderTask(t *testing.T) {
	t.Parallel()
	e := newSim(t, simOpts{})
	// This process admits; the worker processes run.
	env, pool, dsn, root := workerCore(t, e)
	ctx := context.Background()
	w := startWorker(t, e, dsn, root)
	adopt(t, env, "amber-fox", proxmox.KindLXC, lxcThin)
	// The take's task runs until the test has seen the job snooze on it.
	e.sim.StallNextTask("vzsnapshot", lxcThin)

	op, sn, err := env.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: "amber-fox", Name: "while it snoozes"})
	must(t, err)
	var upid string
	waitFor(t, "the take's job snoozed on its running vzsnapshot task, with no lock held", func() bool {
		var waiting bool
		var task string
		var locks, snoozes int
		var state string
		err := pool.QueryRow(ctx, `SELECT o.task_waiting, coalesce(o.task->>'id', ''),
				(SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND a.application_name <> 'boxsnap presence'),
				j.state::text, coalesce((j.metadata->>'snoozes')::int, 0)
			FROM operations o JOIN river_job j ON j.args->>'op' = o.id AND (j.args->>'resume')::int = o.resumes
			WHERE o.id = $1`, op.ID).Scan(&waiting, &task, &locks, &state, &snoozes)
		must(t, err)
		if !waiting || locks != 0 || snoozes < 1 || (state != "available" && state != "scheduled") || !strings.Contains(task, ":vzsnapshot:") {
			return false
		}
		upid = task
		return taskRunning(t, e, upid)
	})
	w.kill()
	if !taskRunning(t, e, upid) {
		t.Fatal("the snapshot task ended before the worker was killed: the test shows no resume from the task")
	}
	startWorker(t, e, dsn, root)
	must(t, e.sim.FinishTask(upid))
	got := env.Wait(t, op)
	if got.State != snapshots.OpDone {
		t.Fatalf("the take resumed from its task ended %s: %q", got.State, deref(got.Error))
	}
	res, err := env.Take.Kinds().Take.Result(got)
	must(t, err)
	if res.Snapshot != sn.ID {
		t.Fatalf("the take answered %s, want %s", res.Snapshot, sn.ID)
	}
	after, _, err := env.Core.Snapshot(ctx, snapshots.Owner(), sn.ID)
	must(t, err)
	if after.State != snapshots.StateReady {
		t.Fatalf("the snapshot is %s, want ready", after.State)
	}
	tasks, err := e.sim.Tasks("pve-1")
	must(t, err)
	n := 0
	for _, tk := range tasks {
		if tk.Type == "vzsnapshot" && tk.ID == "214" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("Proxmox ran %d snapshot tasks for the take, want 1 (the resume took it again)", n)
	}
}

func taskRunning(t *testing.T, e *simEnv, upid string) bool {
	t.Helper()
	tasks, err := e.sim.Tasks("pve-1")
	must(t, err)
	for _, tk := range tasks {
		if tk.UPID == upid {
			return tk.Running
		}
	}
	return false
}
