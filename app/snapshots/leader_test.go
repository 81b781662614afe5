package snapshots_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
)

// TestADeadLeadersWorkResumedWithinTheRecoverInterval: a dead process's work
// is resumed within the recover interval by any live worker, even when the
// dead process was River's leader (the only one that queues the periodic
// jobs, whose lease another takes only after River's 15-second TTL). Two
// worker processes on one database with a 1-second recover interval: the
// leader runs a take and stalls in it; the other is ready; the leader is
// killed with SIGKILL, and the other resumes the take and finishes it
// within one recover interval and a little.
func TestADeadLeadersWorkResumedWithinTheRecoverInterval(t *testing.T) {
	t.Parallel()
	const every = time.Second
	const slack = 2 * time.Second
	ctx := context.Background()
	e, pool, dsn, root := coretest.WorkerCore(t, coretest.Options{})
	_, agent, _ := e.Thread(t, "Keep the leader's work going")
	e.Box(t, agent, "lead-box")
	recoverEvery := workerRecover + "=" + every.String()

	// The first worker, alone, is River's leader; the take is its.
	dir := t.TempDir()
	marker := filepath.Join(dir, "stalled")
	leader := startWorkerEnv(t, dsn, root, "before:snapshot", marker, recoverEvery, workerReady+"="+filepath.Join(dir, "leader-ready"))
	leaderID := workerReadyID(t, filepath.Join(dir, "leader-ready"), leader)
	if !strings.Contains(leaderID, "_"+strconv.Itoa(leader.Cmd.Process.Pid)+"_") {
		t.Fatalf("the worker's ID %q does not name its process %d", leaderID, leader.Cmd.Process.Pid)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var id string
		err := pool.QueryRow(ctx, "SELECT leader_id FROM river_leader").Scan(&id)
		if err == nil && id == leaderID {
			break
		}
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first worker %s is not River's leader after 30 s (leader %q)", leaderID, id)
		}
		time.Sleep(50 * time.Millisecond)
	}
	op, _, err := e.Take.Take(ctx, agent, taking.TakeRequest{Box: "lead-box", Name: "held-by-the-leader"})
	if err != nil {
		t.Fatal(err)
	}
	leader.WaitFile(t, marker)

	// The second worker: working (its start's own recover done, which
	// leaves the take to its live leader) before the leader dies.
	other := startWorkerEnv(t, dsn, root, "", "", recoverEvery, workerReady+"="+filepath.Join(dir, "other-ready"))
	otherID := workerReadyID(t, filepath.Join(dir, "other-ready"), other)
	var resumes int
	var state string
	if err := pool.QueryRow(ctx, "SELECT state, resumes FROM operations WHERE id = $1", op.ID).Scan(&state, &resumes); err != nil {
		t.Fatal(err)
	}
	if state != snapshots.OpRunning || resumes != 0 {
		t.Fatalf("the live leader's take was taken from it: %s, resumed %d times", state, resumes)
	}

	killed := time.Now()
	leader.Kill()
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	done, err := e.Core.Wait(wctx, op.ID)
	if err != nil {
		t.Fatalf("the dead leader's take did not end within a minute: %v", err)
	}
	took := time.Since(killed)
	if done.State != snapshots.OpDone {
		t.Fatalf("the resumed take ended %s at %s: %s", done.State, done.Step, coretest.Deref(done.Error))
	}
	var by string
	if err := pool.QueryRow(ctx, `SELECT attempted_by[array_upper(attempted_by, 1)] FROM river_job
		WHERE kind = 'operation' AND args->>'op' = $1 AND (args->>'resume')::int = $2`, op.ID, done.Resumes).Scan(&by); err != nil {
		t.Fatal(err)
	}
	t.Logf("the dead leader's take was resumed %d time(s) by %s and done %s after the kill (recover interval %s)", done.Resumes, by, took.Round(10*time.Millisecond), every)
	if done.Resumes < 1 || by != otherID {
		t.Fatalf("the take was done by %q after %d resumes; want the live worker %s", by, done.Resumes, otherID)
	}
	if took > every+slack {
		t.Fatalf("a killed leader's take was resumed and done %s after the kill; the recover interval is %s", took.Round(10*time.Millisecond), every)
	}
}

// workerReadyID waits for a worker's ready file and answers the worker's ID in
// it.
func workerReadyID(t *testing.T, path string, w *coretest.Worker) string {
	t.Helper()
	w.WaitFile(t, path)
	for range 100 { // written just after it is made
		if id, err := os.ReadFile(path); err == nil && len(id) > 0 {
			return string(id)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the worker's ready file stays empty")
	return ""
}
