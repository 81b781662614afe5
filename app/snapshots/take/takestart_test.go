package take_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
)

// takeJob is the River job a take's admission queued, as a worker gets it.
func takeJob(t *testing.T, e *coretest.Env, op *snapshots.Operation) operations.Args {
	t.Helper()
	var args operations.Args
	if err := e.Pool.QueryRow(context.Background(), `SELECT args->>'box', args->>'op', (args->>'resume')::int, coalesce(args->>'kind', '')
		FROM river_job WHERE args->>'op' = $1 ORDER BY id DESC LIMIT 1`, op.ID).Scan(&args.Box, &args.Op, &args.Resume, &args.OpKind); err != nil {
		t.Fatal(err)
	}
	return args
}

// TestTakeStartsInOneStatement (a take's run starts with its own statement,
// TakeStart, where it sent OpTryStart and TakeSnapshotToRun): a take's job
// names its kind and its run starts with TakeStart, which records the step it
// runs first (the picture for a first run of a box with a screen, else the
// snapshot; nothing for a snapshot no longer taking) and answers its snapshot
// and box; a take another worker holds is neither started nor stepped; what
// TakeStart answers no row for holds no lock after it.
func TestTakeStartsInOneStatement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{NoWorkers: true})
	if _, err := e.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "start-box", Backend: "local",
		HasScreen: true, ScreenURL: "http://127.0.0.1:1/"}); err != nil {
		t.Fatal(err)
	}
	op, sn, err := e.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: "start-box", Name: "first"})
	if err != nil {
		t.Fatal(err)
	}
	job := takeJob(t, e, op)
	if job.OpKind != snapshots.OpTake {
		t.Fatalf("the take's job names kind %q, want %q", job.OpKind, snapshots.OpTake)
	}
	lock, probe := e.OpLock(t, op.ID), e.OpLock(t, op.ID)
	read := func() *snapshots.Operation {
		t.Helper()
		got, err := e.Core.Engine().ByID(ctx, e.Pool, op.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	start := func() (string, error) {
		t.Helper()
		r, err := e.Store.TakeStart(ctx, lock.Conn, op.ID)
		if err == nil {
			if r.Snapshot.ID != sn.ID || r.Box.Name != "start-box" || r.Operation.StartedAt == nil {
				t.Fatalf("TakeStart answered %s of %s, started %v", r.Snapshot.ID, r.Box.Name, r.Operation.StartedAt)
			}
			if probe.Free() {
				t.Fatal("TakeStart answered a row and holds no lock")
			}
			lock.LetGo()
		}
		return r.Operation.Step, err
	}

	// The first step, by the rules TakeSnapshotToRun had.
	if step, err := start(); err != nil || step != snapshots.StepPicture {
		t.Fatalf("a first run of a box with a screen: step %q (%v), want %q", step, err, snapshots.StepPicture)
	}
	if _, err := e.Pool.Exec(ctx, `UPDATE operations SET step = 'queued', task_waiting = true WHERE id = $1`, op.ID); err != nil {
		t.Fatal(err)
	}
	if step, err := start(); err != nil || step != snapshots.StepSnapshot {
		t.Fatalf("a run after a task its job snoozed on: step %q (%v), want %q", step, err, snapshots.StepSnapshot)
	}
	if _, err := e.Pool.Exec(ctx, `UPDATE operations SET step = 'queued', task_waiting = false, resumes = 1 WHERE id = $1`, op.ID); err != nil {
		t.Fatal(err)
	}
	if step, err := start(); err != nil || step != snapshots.StepSnapshot {
		t.Fatalf("a run after a restart: step %q (%v), want %q", step, err, snapshots.StepSnapshot)
	}
	if _, err := e.Pool.Exec(ctx, `UPDATE operations SET step = 'queued', resumes = 0, started_at = NULL WHERE id = $1`, op.ID); err != nil {
		t.Fatal(err)
	}

	// Held by another worker: neither started nor stepped.
	if !lock.Take() {
		t.Fatal("the lock is held already")
	}
	if err := e.Core.Engine().Work(ctx, job); err != nil {
		t.Fatal(err)
	}
	if got := read(); got.StartedAt != nil || got.Step != operations.StepQueued || got.State != snapshots.OpRunning {
		t.Fatalf("a take another worker holds: started %v at step %q, %s; want it unstarted, queued, running", got.StartedAt, got.Step, got.State)
	}
	lock.LetGo()

	// Not a take, or its snapshot gone: no row, and no lock held.
	if _, err := e.Pool.Exec(ctx, `UPDATE operations SET kind = 'keep' WHERE id = $1`, op.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := start(); !errors.Is(err, pgx.ErrNoRows) {
		t.Fatalf("TakeStart of another kind of operation: %v, want no row", err)
	}
	if !probe.Free() {
		t.Fatal("TakeStart kept the lock of an operation it answered no row for")
	}
	if _, err := e.Pool.Exec(ctx, `UPDATE operations SET kind = 'take' WHERE id = $1`, op.ID); err != nil {
		t.Fatal(err)
	}

	// Its job runs it: the run begins with TakeStart, and the take ends
	// as it did.
	if err := e.Core.Engine().Work(ctx, job); err != nil {
		t.Fatal(err)
	}
	done := read()
	if done.State != snapshots.OpDone || done.Step != snapshots.StepLimit {
		t.Fatalf("the take ended %s at step %q (%v), want done at %q", done.State, done.Step, done.Error, snapshots.StepLimit)
	}
	if res, err := e.Take.Kinds().Take.Result(done); err != nil || res.Snapshot != sn.ID || res.Name != "first" || res.Count != 1 {
		t.Fatalf("the take's answer: %+v (%v)", res, err)
	}
	if !probe.Free() {
		t.Fatal("the lock is held after the take's run")
	}
	// Ended: its start answers no row and holds nothing.
	if _, err := start(); !errors.Is(err, pgx.ErrNoRows) {
		t.Fatalf("TakeStart of an ended take: %v, want no row", err)
	}
	if !probe.Free() {
		t.Fatal("TakeStart kept the lock of an ended take")
	}
}

// TestTakeStartReadsWhatTheWorkerBeforeCommitted (TakeStart reads the take
// with its start, in the statement that takes its lock): the snapshot and the
// operation are read once the lock is got, locked, so a change that a worker
// before it commits while the start waits is what the run goes on from: a
// snapshot made ready is not taken again, and an operation ended is not
// started.
func TestTakeStartReadsWhatTheWorkerBeforeCommitted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{NoWorkers: true})
	e.Box(t, snapshots.Owner(), "before-box")
	committing := func(op *snapshots.Operation, write string, args ...any) (chan error, pgx.Tx) {
		t.Helper()
		tx, err := e.Pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tx.Rollback(ctx) })
		if _, err := tx.Exec(ctx, write, args...); err != nil {
			t.Fatal(err)
		}
		ran := make(chan error, 1)
		job := takeJob(t, e, op)
		go func() { ran <- e.Core.Engine().Work(ctx, job) }()
		dbtest.WaitBlocked(t, e.Pool, "the start did not wait for the change being committed", func() bool { return len(ran) > 0 })
		return ran, tx
	}

	// The snapshot is made ready, as by a worker killed after its take
	// was recorded: the run goes on at the limit's step, and takes nothing.
	op, sn, err := e.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: "before-box", Name: "first"})
	if err != nil {
		t.Fatal(err)
	}
	ran, tx := committing(op, `UPDATE snapshots SET state = 'ready', ref = 'made-before', captured_at = now() WHERE id = $1`, sn.ID)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-ran; err != nil {
		t.Fatalf("the run after the snapshot was made ready: %v", err)
	}
	done, err := e.Core.Engine().ByID(ctx, e.Pool, op.ID)
	if err != nil {
		t.Fatal(err)
	}
	if done.State != snapshots.OpDone || done.Step != snapshots.StepLimit {
		t.Fatalf("the take ended %s at step %q (%v), want done at %q", done.State, done.Step, done.Error, snapshots.StepLimit)
	}
	var ref string
	if err := e.Pool.QueryRow(ctx, `SELECT ref FROM snapshots WHERE id = $1`, sn.ID).Scan(&ref); err != nil || ref != "made-before" {
		t.Fatalf("the snapshot's ref is %q (%v): the run took it again", ref, err)
	}

	// The operation is ended: the start finds it ended, and runs nothing.
	second, sn2, err := e.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: "before-box", Name: "second"})
	if err != nil {
		t.Fatal(err)
	}
	ran, tx = committing(second, `UPDATE operations SET state = 'failed', error = 'ended by the test', ended_at = now() WHERE id = $1`, second.ID)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	got, err := e.Core.Engine().ByID(ctx, e.Pool, second.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != snapshots.OpFailed || got.StartedAt != nil || got.Step != operations.StepQueued {
		t.Fatalf("a take ended while its start waited: %s, started %v, step %q; want failed, unstarted, queued", got.State, got.StartedAt, got.Step)
	}
	var state string
	if err := e.Pool.QueryRow(ctx, `SELECT state FROM snapshots WHERE id = $1`, sn2.ID).Scan(&state); err != nil || state != snapshots.StateTaking {
		t.Fatalf("its snapshot is %q (%v), want it left taking", state, err)
	}
	if !e.OpLock(t, second.ID).Free() {
		t.Fatal("the start kept the lock of a take that had ended")
	}
}

// TestTakeAdmissionReadsTheBoxAfterItsLock (why the admission's read of the
// box's snapshots is a statement of its own, after TakeAdmitLock): an
// admission that waits for the box's row while another commits a snapshot of
// that name reads the box's snapshots once it holds the row, and names its
// own apart, where a read in the lock's statement, as that statement began,
// would miss the other's and refuse the name as taken.
func TestTakeAdmissionReadsTheBoxAfterItsLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{NoWorkers: true})
	b := e.Box(t, snapshots.Owner(), "waits-box")
	first := e.AdmitReady(t, snapshots.Owner(), "waits-box", "first")
	tx, err := e.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT 1 FROM boxes WHERE id = $1 FOR UPDATE`, b.ID); err != nil {
		t.Fatal(err)
	}
	// Another admission's record, committed once the take waits.
	for _, q := range []string{`CREATE TEMP TABLE other ON COMMIT DROP AS SELECT * FROM snapshots WHERE id = $1`,
		`UPDATE other SET id = 'sn' || substr(md5(random()::text), 1, 12), name = 'same' WHERE id = $1`,
		`INSERT INTO snapshots SELECT * FROM other WHERE $1::text IS NOT NULL`} {
		if _, err := tx.Exec(ctx, q, first.ID); err != nil {
			t.Fatal(err)
		}
	}
	type taken struct {
		sn  *snapshots.Snapshot
		err error
	}
	got := make(chan taken, 1)
	go func() {
		_, sn, err := e.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: "waits-box", Name: "same"})
		got <- taken{sn, err}
	}()
	dbtest.WaitBlocked(t, e.Pool, "the take did not wait for the box's row", func() bool { return len(got) > 0 })
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil {
		t.Fatalf("the take that waited: %v", r.err)
	}
	if r.sn.Name != "same (2)" {
		t.Fatalf("the take that waited is named %q, want %q", r.sn.Name, "same (2)")
	}
}
