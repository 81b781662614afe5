package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/jobs"
)

// TestFetchedButNotStartedResumes: a worker fetches an operation's job (River
// marks it running, attempted by the worker's client ID) and its process
// dies before the operation starts. While that worker lives, a live worker's
// recover leaves the job alone (it is past the old 5-second guess, and still
// not the live worker's to take); once its connection ends, as a killed
// process's does, the live worker resumes the operation at its next recover,
// with no restart.
func TestFetchedButNotStartedResumes(t *testing.T) {
	t.Parallel()
	e := coretest.New(t, coretest.Options{NoWorkers: true})
	ctx := context.Background()
	e.Box(t, snapshots.Owner(), "lost-fetch")
	op, _, err := e.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: "lost-fetch", Name: "fetched"})
	if err != nil {
		t.Fatal(err)
	}

	// The worker that fetches the job: its presence lock on a session of
	// its own, and the job as River's fetch leaves it.
	const deadID = "worker-that-dies"
	dead, err := pgx.ConnectConfig(ctx, e.Pool.Config().ConnConfig.Copy())
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close(ctx)
	if _, err := dead.Exec(ctx, "SELECT pg_advisory_lock(hashtextextended('boxsnap worker ' || $1::text, 0))", deadID); err != nil {
		t.Fatal(err)
	}
	tag, err := e.Pool.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = attempt + 1, attempted_at = now(),
		attempted_by = array_append(attempted_by, $2::text) WHERE kind = 'operation' AND args->>'op' = $1`, op.ID, deadID)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("fetch the job: %v, %d rows", err, tag.RowsAffected())
	}
	alive := func() bool {
		var a bool
		if err := e.Pool.QueryRow(ctx, "SELECT boxsnap_worker_alive($1)", deadID).Scan(&a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	if !alive() {
		t.Fatal("boxsnap_worker_alive answers false for a worker whose session holds its lock")
	}

	// A live worker, recovering every second.
	const every = time.Second
	live, err := jobs.NewClient(e.Pool, jobs.ClientOptions{Work: true, Logger: e.Logger,
		Deps: jobs.Deps{Auth: e.Auth, Core: e.Core, Sweeps: e.Sweeps, Logger: e.Logger, ManualHistory: true, Intervals: jobs.Intervals{Recover: every}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := live.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = live.Stop(sctx)
	})
	if !alive() || live.WorkerID() == "" {
		t.Fatal("the live worker holds no presence of its own")
	}
	var liveAlive bool
	if err := e.Pool.QueryRow(ctx, "SELECT boxsnap_worker_alive($1)", live.WorkerID()).Scan(&liveAlive); err != nil || !liveAlive {
		t.Fatalf("the live worker reads as dead (%v)", err)
	}

	// Past 5 s of recovers every second, the fetch stays its live worker's.
	time.Sleep(5*time.Second + 500*time.Millisecond)
	var state string
	var started bool
	var resumes int
	if err := e.Pool.QueryRow(ctx, "SELECT state, started_at IS NOT NULL, resumes FROM operations WHERE id = $1", op.ID).Scan(&state, &started, &resumes); err != nil {
		t.Fatal(err)
	}
	if state != snapshots.OpRunning || started || resumes != 0 {
		t.Fatalf("a live worker's fetched job was taken: state %s, started %v, resumes %d", state, started, resumes)
	}

	// The worker dies: its connection is ended as a killed process's is.
	died := time.Now()
	if _, err := e.Pool.Exec(ctx, "SELECT pg_terminate_backend($1)", dead.PgConn().PID()); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	got, err := e.Core.Wait(wctx, op.ID)
	if err != nil {
		t.Fatalf("the dead worker's operation did not end within 30 s: %v", err)
	}
	took := time.Since(died)
	if got.State != snapshots.OpDone {
		t.Fatalf("the resumed operation ended %s at step %s", got.State, got.Step)
	}
	t.Logf("resumed and done %s after its worker died (recover interval %s)", took.Round(10*time.Millisecond), every)
	if took > 3*every+2*time.Second {
		t.Fatalf("resumed %s after its worker died, more than the recover interval (%s) allows", took, every)
	}
}

// TestCheckNowResumesWhatNoWorkerHolds: Check now on an operation that reads
// running, whose job a worker fetched. While that worker lives (its presence
// lock held), Check now leaves it: it answers it still running, resumed by
// no one. Once the worker dies, Check now resumes it at once (a new attempt,
// queued), without waiting for the recover interval, and it finishes.
func TestCheckNowResumesWhatNoWorkerHolds(t *testing.T) {
	t.Parallel()
	e := coretest.New(t, coretest.Options{NoWorkers: true})
	ctx := context.Background()
	e.Box(t, snapshots.Owner(), "checked-fetch")
	op, _, err := e.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: "checked-fetch", Name: "checked"})
	if err != nil {
		t.Fatal(err)
	}
	const deadID = "worker-that-dies-before-check"
	dead, err := pgx.ConnectConfig(ctx, e.Pool.Config().ConnConfig.Copy())
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close(ctx)
	if _, err := dead.Exec(ctx, "SELECT pg_advisory_lock(hashtextextended('boxsnap worker ' || $1::text, 0))", deadID); err != nil {
		t.Fatal(err)
	}
	tag, err := e.Pool.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = attempt + 1, attempted_at = now(),
		attempted_by = array_append(attempted_by, $2::text) WHERE kind = 'operation' AND args->>'op' = $1`, op.ID, deadID)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("fetch the job: %v, %d rows", err, tag.RowsAffected())
	}
	resumes := func() int {
		var n int
		if err := e.Pool.QueryRow(ctx, "SELECT resumes FROM operations WHERE id = $1", op.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	// A live worker holds it: still running, and left to it.
	got, err := e.Core.CheckNow(ctx, snapshots.Owner(), op.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != snapshots.OpRunning || resumes() != 0 {
		t.Fatalf("Check now on a live worker's operation: state %s, resumes %d; want still running, resumed by no one", got.State, resumes())
	}

	// The worker dies: Check now resumes it.
	if _, err := e.Pool.Exec(ctx, "SELECT pg_terminate_backend($1)", dead.PgConn().PID()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var alive bool
		if err := e.Pool.QueryRow(ctx, "SELECT boxsnap_worker_alive($1)", deadID).Scan(&alive); err != nil {
			t.Fatal(err)
		}
		if !alive {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the dead worker's presence lock outlived its connection by 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	got, err = e.Core.CheckNow(ctx, snapshots.Owner(), op.ID)
	if err != nil {
		t.Fatal(err)
	}
	if resumes() != 1 {
		t.Fatalf("Check now on an operation no worker holds did not resume it: state %s, resumes %d", got.State, resumes())
	}
	var queued int
	if err := e.Pool.QueryRow(ctx, "SELECT count(*) FROM river_job WHERE kind = 'operation' AND args->>'op' = $1 AND state = 'available' AND (args->>'resume')::int = 1", op.ID).Scan(&queued); err != nil || queued != 1 {
		t.Fatalf("Check now queued %d new attempts (%v), want 1", queued, err)
	}
	if err := e.Core.RunOperation(ctx, op.ID); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	end, err := e.Core.Wait(wctx, op.ID)
	if err != nil {
		t.Fatal(err)
	}
	if end.State != snapshots.OpDone {
		t.Fatalf("the resumed take ended %s: %v", end.State, end.Error)
	}
}
