package operations_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// echoParams and echoResult are a test kind's typed parameters and result.
type echoParams struct {
	Words string `json:"words"`
	Times int    `json:"times"`
}

type echoResult struct {
	Said []string `json:"said"`
}

// admitEcho admits one operation of kind on box in its own transaction.
func admitEcho[P, R any](t *testing.T, env *coretest.Env, k *operations.Kind[P, R], box *snapshots.Box, p P) *operations.Operation {
	t.Helper()
	var op *operations.Operation
	err := store.InTx(context.Background(), env.Pool, func(tx pgx.Tx) error {
		var err error
		op, err = k.Admit(context.Background(), tx, operations.Request{Box: &box.ID, ByKind: "owner"}, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// TestRegisteredKindIsTyped: a kind registered with Register gets its
// parameters decoded as its type and its result recorded and read back as
// its type; parameters that are not its type fail the operation in words,
// and the runner is never called with them.
func TestRegisteredKindIsTyped(t *testing.T) {
	// No workers: this test runs each operation itself.
	env := coretest.New(t, coretest.Options{NoWorkers: true})
	ctx := context.Background()
	b := env.Box(t, snapshots.Owner(), "echo-box")
	calls := 0
	echo := operations.Register(env.Core.Engine(), "echo", func(ctx context.Context, op *operations.Operation, p echoParams) (echoResult, error) {
		calls++
		var r echoResult
		for range p.Times {
			r.Said = append(r.Said, p.Words)
		}
		return r, nil
	})
	op := admitEcho(t, env, echo, b, echoParams{Words: "hello", Times: 2})
	if err := env.Core.RunOperation(ctx, op.ID); err != nil {
		t.Fatal(err)
	}
	op = env.Wait(t, op)
	if op.State != operations.Done {
		t.Fatalf("echo ended %s: %v", op.State, op.Error)
	}
	res, err := echo.Result(op)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res.Said) != "[hello hello]" {
		t.Fatalf("echo answered %v, want [hello hello]", res.Said)
	}

	// An echo whose parameters are not echo's type.
	bad := admitEcho(t, env, echo, b, echoParams{Words: "again", Times: 1})
	if _, err := env.Pool.Exec(ctx, `UPDATE operations SET params = '{"times": "many"}' WHERE id = $1`, bad.ID); err != nil {
		t.Fatal(err)
	}
	before := calls
	if err := env.Core.RunOperation(ctx, bad.ID); err != nil {
		t.Fatal(err)
	}
	got := env.Wait(t, bad)
	if got.State != operations.Failed || got.Error == nil || !strings.Contains(*got.Error, "boxsnap could not read its parameters") {
		t.Fatalf("echo with parameters of another type ended %s %v", got.State, got.Error)
	}
	if calls != before {
		t.Fatal("the runner was called with parameters that are not its type")
	}
	if _, err := echo.Result(got); !errors.Is(err, operations.ErrNotFound) {
		t.Fatalf("a failed operation's result: %v, want not found", err)
	}
}

// TestWaitersShareOneListener: twenty callers waiting for operations hold one
// connection between them, the listener's; each wakes when its own operation
// ends, and once nobody waits the listener gives its connection back.
func TestWaitersShareOneListener(t *testing.T) {
	env := coretest.New(t, coretest.Options{NoWorkers: true})
	ctx := context.Background()
	const waiters = 20
	var ops []*snapshots.Operation
	for i := range waiters {
		env.Box(t, snapshots.Owner(), fmt.Sprintf("wait-%02d", i))
		op, _, err := env.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: fmt.Sprintf("wait-%02d", i)})
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, op)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	ended := make(chan *snapshots.Operation, waiters)
	for _, op := range ops {
		go func() {
			got, err := env.Core.Wait(wctx, op.ID)
			if err != nil {
				t.Error(err)
			}
			ended <- got
		}()
	}
	until(t, fmt.Sprintf("%d waiters never listened", waiters), func() bool {
		n, connected := env.Core.Engine().Listening()
		return n == waiters && connected
	})
	// Between their rechecks (a read each, every second) the waits hold one
	// connection between them: the listener's, the only one listening.
	var listeners int
	if err := env.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'`).Scan(&listeners); err != nil {
		t.Fatal(err)
	}
	if listeners != 1 {
		t.Fatalf("%d LISTEN connections for %d waiters, want 1", listeners, waiters)
	}
	// Each ends when its operation does, and not before.
	for i, op := range ops {
		if err := env.Core.RunOperation(ctx, op.ID); err != nil {
			t.Fatal(err)
		}
		got := <-ended
		if got.State != snapshots.OpDone {
			t.Fatalf("wait %d ended with its operation %s", i, got.State)
		}
	}
	until(t, "nobody waits and the listener still holds its connection", func() bool {
		n, connected := env.Core.Engine().Listening()
		return n == 0 && !connected
	})
}

// until polls cond, the state the engine reports, until it holds, and
// fails the test with what when it does not within 30 s.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatalf("%s within 30 s", what)
		case <-tick.C:
		}
	}
}

// TestWaitSinceHearsEveryEnd: a wait for an operation admitted while the
// listener listens needs no read to learn its end. An end in this process
// hands the wait the operation as it ended, even when it came before the wait
// subscribed; an end in another process (its notification alone) is read
// once. The waits here never recheck (it is an hour away), so each one
// that ends heard its end.
func TestWaitSinceHearsEveryEnd(t *testing.T) {
	env := coretest.New(t, coretest.Options{NoWorkers: true})
	ctx := context.Background()
	e := env.Core.Engine()
	e.SetWaitRecheck(time.Hour)
	// Someone waits throughout, so the listener listens.
	keep := env.Box(t, snapshots.Owner(), "keep-listening")
	held, _, err := env.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: keep.Name})
	if err != nil {
		t.Fatal(err)
	}
	hctx, stopHeld := context.WithCancel(ctx)
	defer stopHeld()
	go func() { _, _ = e.Wait(hctx, held.ID) }()
	until(t, "the listener never listened", func() bool { _, connected := e.Listening(); return connected })
	take := func(name string) (*snapshots.Operation, operations.Mark) {
		env.Box(t, snapshots.Owner(), name)
		m := e.Mark()
		op, _, err := env.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: name})
		if err != nil {
			t.Fatal(err)
		}
		return op, m
	}
	check := func(what string, op *snapshots.Operation, m operations.Mark, end func()) {
		t.Helper()
		before, _ := e.Listening()
		// The bound only ends a wait that never hears its end.
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		got := make(chan *snapshots.Operation, 1)
		go func() {
			w, err := e.WaitSince(wctx, op, m)
			if err != nil {
				t.Error(err)
			}
			got <- w
		}()
		// The listener counts the wait once it has subscribed (unless it
		// has answered already): an end after this comes after the wait's
		// subscription.
		until(t, what+": the wait never subscribed", func() bool { n, _ := e.Listening(); return n > before || len(got) > 0 })
		end()
		w := <-got
		if wctx.Err() != nil {
			t.Fatalf("%s: the wait never heard the end, and ended with its bound", what)
		}
		row, err := e.ByID(ctx, env.Pool, op.ID)
		if err != nil {
			t.Fatal(err)
		}
		if w == nil || w.State != row.State || string(w.Result) != string(row.Result) || w.EndedAt == nil || !w.EndedAt.Equal(*row.EndedAt) {
			t.Fatalf("%s: the wait answered %+v, the operation is %+v", what, w, row)
		}
	}
	// Ended here, after the wait subscribed.
	op, m := take("ends-here")
	check("an end in this process", op, m, func() {
		if err := env.Core.RunOperation(ctx, op.ID); err != nil {
			t.Fatal(err)
		}
	})
	// Ended here before the wait subscribed.
	op, m = take("ends-first")
	if err := env.Core.RunOperation(ctx, op.ID); err != nil {
		t.Fatal(err)
	}
	check("an end before the wait", op, m, func() {})
	// Ended elsewhere: only its notification comes.
	op, m = take("ends-elsewhere")
	check("an end in another process", op, m, func() {
		if _, err := env.Pool.Exec(ctx, `WITH e AS (UPDATE operations SET state = 'failed', error = 'elsewhere', ended_at = now() WHERE id = $1 RETURNING id)
			SELECT pg_notify('boxsnap_operation_ended', id) FROM e`, op.ID); err != nil {
			t.Fatal(err)
		}
	})
}

// TestAnEndQueuesWhatWaitsBehindIt (an end in one statement when nothing
// waits): an operation admitted while another of its box runs waits, and that
// one's end queues it, also when the admission holds the box's lock as the
// end begins (the end waits for it, then reads the admission's mark); an end
// with nothing behind it queues nothing.
func TestAnEndQueuesWhatWaitsBehindIt(t *testing.T) {
	env := coretest.New(t, coretest.Options{NoWorkers: true})
	ctx := context.Background()
	e := env.Core.Engine()
	b := env.Box(t, snapshots.Owner(), "turns")
	echo := operations.Register(e, "echo-turn", func(ctx context.Context, op *operations.Operation, p echoParams) (echoResult, error) {
		return echoResult{}, nil
	})
	step := func(op *operations.Operation) string {
		t.Helper()
		got, err := e.ByID(ctx, env.Pool, op.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.Step
	}

	// Admitted one after the other: the second waits; the first's end
	// queues it.
	first := admitEcho(t, env, echo, b, echoParams{})
	second := admitEcho(t, env, echo, b, echoParams{})
	if s := step(second); s != operations.StepWaiting {
		t.Fatalf("admitted while another of its box runs: step %s, want %s", s, operations.StepWaiting)
	}
	if err := e.End(ctx, first, operations.Failed, "ended by the test", ""); err != nil {
		t.Fatal(err)
	}
	if s := step(second); s != operations.StepQueued {
		t.Fatalf("after the end of the one before: step %s, want %s", s, operations.StepQueued)
	}

	// The third is admitted while the second's end begins: the admission
	// holds the box's lock, and the end waits for it.
	tx, err := env.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT 1 FROM boxes WHERE id = $1 FOR UPDATE`, b.ID); err != nil {
		t.Fatal(err)
	}
	third, err := echo.Admit(ctx, tx, operations.Request{Box: &b.ID, ByKind: "owner"}, echoParams{})
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- e.End(ctx, second, operations.Failed, "ended by the test", "") }()
	dbtest.WaitBlocked(t, env.Pool, "the end did not wait for the admission holding the box's lock", func() bool { return len(ended) > 0 })
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-ended; err != nil {
		t.Fatal(err)
	}
	if s := step(third); s != operations.StepQueued {
		t.Fatalf("admitted as the one before ended: step %s, want %s (nothing would ever queue it)", s, operations.StepQueued)
	}
	// Nothing behind the third: its end is alone.
	if err := e.End(ctx, third, operations.Failed, "ended by the test", ""); err != nil {
		t.Fatal(err)
	}
	var jobs int
	if err := env.Pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE args->>'box' = $1`, b.ID).Scan(&jobs); err != nil {
		t.Fatal(err)
	}
	if jobs != 3 {
		t.Fatalf("%d jobs for the box's three operations, want 3", jobs)
	}
}

// holdLock takes an operation's session lock on a connection of its own,
// as another worker's run holds it.
func holdLock(t *testing.T, env *coretest.Env, id string) *coretest.OpLock {
	t.Helper()
	l := env.OpLock(t, id)
	if !l.Take() {
		t.Fatalf("the lock of %s is held already", id)
	}
	return l
}

// TestARunStartsWhatNoWorkerHolds (a run's lock and its start in one
// statement, OpTryStart): an operation whose lock another worker holds is
// neither run nor marked started; once that one lets go it runs, once; a run
// of an operation that has ended runs nothing and leaves no lock held; and a
// start that waits for an end another worker is committing finds the
// operation ended, not running.
func TestARunStartsWhatNoWorkerHolds(t *testing.T) {
	env := coretest.New(t, coretest.Options{NoWorkers: true})
	ctx := context.Background()
	e := env.Core.Engine()
	b := env.Box(t, snapshots.Owner(), "one-worker")
	var runs atomic.Int32
	counted := operations.Register(e, "count-runs", func(ctx context.Context, op *operations.Operation, p echoParams) (echoResult, error) {
		runs.Add(1)
		return echoResult{}, nil
	})
	read := func(op *operations.Operation) *operations.Operation {
		t.Helper()
		got, err := e.ByID(ctx, env.Pool, op.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	op := admitEcho(t, env, counted, b, echoParams{})
	other := holdLock(t, env, op.ID)
	if err := e.Run(ctx, op.ID); err != nil {
		t.Fatal(err)
	}
	if got := read(op); runs.Load() != 0 || got.StartedAt != nil || got.State != operations.Running {
		t.Fatalf("run while another worker holds it: %d runs, started %v, %s; want none, unstarted, running", runs.Load(), got.StartedAt, got.State)
	}
	other.LetGo()
	if err := e.Run(ctx, op.ID); err != nil {
		t.Fatal(err)
	}
	if got := read(op); runs.Load() != 1 || got.StartedAt == nil || got.State != operations.Done {
		t.Fatalf("run once the other let go: %d runs, started %v, %s; want one, started, done", runs.Load(), got.StartedAt, got.State)
	}
	if !other.Free() {
		t.Fatal("the run held its lock after it ended")
	}
	// Ended: a second attempt runs nothing, and its start lets go of the
	// lock it took.
	if err := e.Run(ctx, op.ID); err != nil {
		t.Fatal(err)
	}
	if runs.Load() != 1 {
		t.Fatalf("an ended operation ran again (%d runs)", runs.Load())
	}
	if !other.Free() {
		t.Fatal("a run of an ended operation kept its lock")
	}

	// A worker ends an operation and has not committed yet as the next
	// attempt starts: the start waits for the row, then finds it ended.
	second := admitEcho(t, env, counted, b, echoParams{})
	tx, err := env.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `UPDATE operations SET state = 'failed', error = 'ended by the test', ended_at = now() WHERE id = $1`, second.ID); err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- e.Run(ctx, second.ID) }()
	dbtest.WaitBlocked(t, env.Pool, "the start did not wait for the end being committed", func() bool { return len(ran) > 0 })
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if got := read(second); runs.Load() != 1 || got.State != operations.Failed || got.StartedAt != nil {
		t.Fatalf("a start after an end committed meanwhile: %d runs, %s, started %v; want it left failed, unstarted", runs.Load(), got.State, got.StartedAt)
	}
	// The start let go of the lock it took: another worker takes it.
	holdLock(t, env, second.ID)
}

// probeLock is a connection of its own that asks whether an operation's
// session lock is free (it takes it and lets it go again).
func probeLock(t *testing.T, env *coretest.Env, id string) func() bool {
	t.Helper()
	return env.OpLock(t, id).Free
}

// TestAnEndLetsItsRunsLockGo (an end done or failed lets its run's lock go in
// its own statement, OpEndAlone's let_go, where Run sent OpUnlock after it):
// the lock is held while the runner runs and until the end holds the
// operation's row, even when the end waits for that row; it is free once the
// run returns; an end that finds the operation followed writes nothing and
// keeps the lock; an unknown end keeps it until the run returns, as Check now
// may run that operation again.
func TestAnEndLetsItsRunsLockGo(t *testing.T) {
	env := coretest.New(t, coretest.Options{NoWorkers: true})
	ctx := context.Background()
	e := env.Core.Engine()
	b := env.Box(t, snapshots.Owner(), "lets-go")
	running := make(chan *operations.Operation, 1)
	proceed := make(chan string)
	held := operations.Register(e, "held-run", func(ctx context.Context, op *operations.Operation, p echoParams) (echoResult, error) {
		running <- op
		if end := <-proceed; end != "" {
			if err := e.End(ctx, op, end, "ended by the test", ""); err != nil {
				return echoResult{}, err
			}
			<-proceed // the test looks at the lock after this end
		}
		return echoResult{Said: []string{p.Words}}, nil
	})
	run := func(op *operations.Operation) chan error {
		ran := make(chan error, 1)
		go func() { ran <- e.Run(ctx, op.ID) }()
		<-running
		return ran
	}

	// A done end that waits for its row: the lock is held all along.
	op := admitEcho(t, env, held, b, echoParams{Words: "done"})
	free := probeLock(t, env, op.ID)
	ran := run(op)
	if free() {
		t.Fatal("the run does not hold its lock while its runner runs")
	}
	tx, err := env.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT 1 FROM operations WHERE id = $1 FOR UPDATE`, op.ID); err != nil {
		t.Fatal(err)
	}
	proceed <- ""
	dbtest.WaitBlocked(t, env.Pool, "the end did not wait for the operation's row", func() bool { return len(ran) > 0 })
	if free() {
		t.Fatal("the end let the lock go before it held the operation's row: another worker could start it meanwhile")
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if got := env.Wait(t, op); got.State != operations.Done {
		t.Fatalf("ended %s, want done", got.State)
	}
	if !free() {
		t.Fatal("the lock is held after the run returned")
	}

	// An unknown end keeps the lock until the run returns.
	unknown := admitEcho(t, env, held, b, echoParams{Words: "unknown"})
	free = probeLock(t, env, unknown.ID)
	ran = run(unknown)
	proceed <- operations.Unknown
	if got := env.Wait(t, unknown); got.State != operations.Unknown {
		t.Fatalf("the unknown end left the operation %s", got.State)
	}
	if free() {
		t.Fatal("an unknown end let its run's lock go while the run still runs: Check now could run it again meanwhile")
	}
	proceed <- ""
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if !free() {
		t.Fatal("the lock is held after the unknown operation's run returned")
	}

	// A followed operation's end, with let_go, on the connection holding
	// its lock: nothing ends, and the lock is still held.
	first := admitEcho(t, env, held, b, echoParams{})
	admitEcho(t, env, held, b, echoParams{}) // waits behind first: first is followed
	lock := holdLock(t, env, first.ID)
	_, err = env.Store.OpEndAlone(ctx, lock.Conn, db.OpEndAloneParams{ID: first.ID, State: operations.Done, Channel: "boxsnap_operation_ended", LetGo: true})
	if !errors.Is(err, pgx.ErrNoRows) {
		t.Fatalf("a followed end answered %v, want no row", err)
	}
	if probeLock(t, env, first.ID)() {
		t.Fatal("a followed end let the lock go without ending the operation")
	}
	if got, _ := e.ByID(ctx, env.Pool, first.ID); got.State != operations.Running {
		t.Fatalf("a followed end left it %s, want running", got.State)
	}
}

// TestAKindStartsItsOwnRuns (a kind's own start, RegisterStarting, which a
// take's run begins with): an operation's job names its kind, and its run
// begins with that kind's start, whose reads the runner is handed; a start that answers no row leaves the run to the
// engine's start, and the runner reads for itself; Run, which names no
// kind, and a job of another kind start with the engine's.
func TestAKindStartsItsOwnRuns(t *testing.T) {
	env := coretest.New(t, coretest.Options{NoWorkers: true})
	ctx := context.Background()
	e := env.Core.Engine()
	b := env.Box(t, snapshots.Owner(), "own-start")
	var starts atomic.Int32
	noRow := false
	begun := make(chan string, 1)
	own := operations.RegisterStarting(e, "own-start", func(ctx context.Context, conn operations.DB, id string) (db.Operation, string, error) {
		starts.Add(1)
		if noRow {
			return db.Operation{}, "", pgx.ErrNoRows
		}
		r, err := env.Store.OpTryStart(ctx, conn, id)
		return db.Operation(r), "read with the start", err
	}, func(ctx context.Context, op *operations.Operation, p echoParams, read string) (echoResult, error) {
		begun <- read
		return echoResult{}, nil
	})
	job := func(op *operations.Operation) operations.Args {
		t.Helper()
		var args operations.Args
		if err := env.Pool.QueryRow(ctx, `SELECT args->>'box', args->>'op', (args->>'resume')::int, coalesce(args->>'kind', '')
			FROM river_job WHERE args->>'op' = $1`, op.ID).Scan(&args.Box, &args.Op, &args.Resume, &args.OpKind); err != nil {
			t.Fatal(err)
		}
		return args
	}

	op := admitEcho(t, env, own, b, echoParams{})
	args := job(op)
	if args.OpKind != "own-start" {
		t.Fatalf("the job names kind %q, want own-start", args.OpKind)
	}
	if err := e.Work(ctx, args); err != nil {
		t.Fatal(err)
	}
	if got := <-begun; starts.Load() != 1 || got != "read with the start" {
		t.Fatalf("the run began with %d of its kind's starts, and its runner was handed %v", starts.Load(), got)
	}

	// Its start answers no row: the engine's start runs it.
	noRow = true
	second := admitEcho(t, env, own, b, echoParams{})
	if err := e.Work(ctx, job(second)); err != nil {
		t.Fatal(err)
	}
	if got := <-begun; starts.Load() != 2 || got != "" {
		t.Fatalf("after its kind's start answered no row: %d starts, the runner was handed %q, want nothing", starts.Load(), got)
	}
	if got, err := e.ByID(ctx, env.Pool, second.ID); err != nil || got.State != operations.Done {
		t.Fatalf("the engine's start did not run it: %v %v", got, err)
	}

	// Run names no kind; a job of another kind names its own.
	noRow = false
	third := admitEcho(t, env, own, b, echoParams{})
	if err := e.Run(ctx, third.ID); err != nil {
		t.Fatal(err)
	}
	if got := <-begun; starts.Load() != 2 || got != "" {
		t.Fatalf("Run began with its kind's start (%d starts, handed %q)", starts.Load(), got)
	}
	other := operations.Register(e, "other-start", func(ctx context.Context, op *operations.Operation, p echoParams) (echoResult, error) {
		begun <- ""
		return echoResult{}, nil
	})
	fourth := admitEcho(t, env, other, b, echoParams{})
	if err := e.Work(ctx, job(fourth)); err != nil {
		t.Fatal(err)
	}
	if got := <-begun; starts.Load() != 2 {
		t.Fatalf("a job of another kind began with own-start's start (%d starts, handed %q)", starts.Load(), got)
	}
}

// stamped is what a test kind's own start reads with the run's start: the
// box's name, as a typed value, not an any.
type stamped struct {
	BoxName string
}

// stampResult is the test kind's typed result: what its runner was handed.
type stampResult struct {
	Handed string `json:"handed"`
	Words  string `json:"words"`
}

// TestAKindsStartAndResultAreTyped: a kind's own start hands its runner a
// typed value (what it read with the start), and the runner's typed result
// is what the engine records on the operation, read back as its type
// (Kind.Result) and as the operation's result column, in the end that also
// queues the box's next operation; a run the engine's start began hands
// the runner the type's zero value.
func TestAKindsStartAndResultAreTyped(t *testing.T) {
	env := coretest.New(t, coretest.Options{NoWorkers: true})
	ctx := context.Background()
	e := env.Core.Engine()
	b := env.Box(t, snapshots.Owner(), "typed-start")
	stamp := operations.RegisterStarting(e, "stamp", func(ctx context.Context, conn operations.DB, id string) (db.Operation, *stamped, error) {
		r, err := env.Store.OpTryStart(ctx, conn, id)
		if err != nil {
			return db.Operation(r), nil, err
		}
		var s stamped
		if err := conn.QueryRow(ctx, `SELECT b.name FROM boxes b JOIN operations o ON o.box_id = b.id WHERE o.id = $1`, id).Scan(&s.BoxName); err != nil {
			return db.Operation(r), nil, err
		}
		return db.Operation(r), &s, nil
	}, func(ctx context.Context, op *operations.Operation, p echoParams, begun *stamped) (stampResult, error) {
		handed := "nothing"
		if begun != nil {
			handed = begun.BoxName
		}
		return stampResult{Handed: handed, Words: p.Words}, nil
	})
	job := func(op *operations.Operation) operations.Args {
		return operations.Args{Box: b.ID, Op: op.ID, Resume: op.Resumes, OpKind: op.Kind}
	}

	first := admitEcho(t, env, stamp, b, echoParams{Words: "first"})
	second := admitEcho(t, env, stamp, b, echoParams{Words: "second"})
	if err := e.Work(ctx, job(first)); err != nil {
		t.Fatal(err)
	}
	got, err := e.ByID(ctx, env.Pool, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != operations.Done {
		t.Fatalf("the run ended %s %v, want done", got.State, got.Error)
	}
	res, err := stamp.Result(got)
	if err != nil {
		t.Fatal(err)
	}
	if res != (stampResult{Handed: "typed-start", Words: "first"}) {
		t.Fatalf("the recorded result is %+v, want what the runner returned with the box's name its start read", res)
	}
	var column string
	if err := env.Pool.QueryRow(ctx, `SELECT result->>'handed' FROM operations WHERE id = $1`, first.ID).Scan(&column); err != nil || column != "typed-start" {
		t.Fatalf("the operation's result column says handed %q (%v), want typed-start", column, err)
	}
	// The end that recorded the result queued the box's next operation.
	if next, err := e.ByID(ctx, env.Pool, second.ID); err != nil || next.Step != operations.StepQueued {
		t.Fatalf("after the first's end the second is %v (%v), want queued", next, err)
	}

	// Run begins with the engine's start: the runner is handed nothing.
	if err := e.Run(ctx, second.ID); err != nil {
		t.Fatal(err)
	}
	got, err = e.ByID(ctx, env.Pool, second.ID)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := stamp.Result(got); err != nil || res != (stampResult{Handed: "nothing", Words: "second"}) {
		t.Fatalf("after the engine's start the recorded result is %+v (%v), want handed nothing", res, err)
	}
}
