package operations

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// ErrTaskPending is what a backend answers, through the Snoozer's
// recorder, when it has started a provider task and left the wait to the
// engine: the runner returns it as it is, and the job snoozes.
var ErrTaskPending = providers.ErrTaskPending

// Pending reports whether err says a provider task runs on, left to the
// engine: a runner returns such an error at once, ending nothing.
func Pending(err error) bool { return errors.Is(err, providers.ErrTaskPending) }

// recorder records a backend's task on its operation before the backend
// waits for it; with snooze, it tells the backend to leave the wait to the
// engine.
type recorder struct {
	e      *Engine
	op     *Operation
	snooze bool
}

func (r recorder) TaskStarted(ctx context.Context, task providers.TaskRef) error {
	raw, err := json.Marshal(task)
	if err != nil {
		return fmt.Errorf("record task of %s: %w", r.op.ID, err)
	}
	if err := r.e.st.OpSetTask(ctx, r.e.st.Pool, db.OpSetTaskParams{ID: r.op.ID, Task: raw, TaskWaiting: r.snooze}); err != nil {
		return fmt.Errorf("record task of %s: %w", r.op.ID, err)
	}
	r.op.Task, r.op.TaskWaiting = raw, r.snooze
	if r.snooze {
		return ErrTaskPending
	}
	return nil
}

// Recorder records a backend's task on op, and the backend waits for it in
// place (a step whose resume cannot start from the task alone).
func (e *Engine) Recorder(op *Operation) providers.Recorder { return recorder{e: e, op: op} }

// Snoozer records a backend's task on op and leaves the wait to the
// engine: the backend answers ErrTaskPending at once, the runner returns
// it, the job snoozes, and the runner runs again, resuming, once the
// provider says the task ended (op.TaskEnded). Use it where the step's
// resume finds what the task did.
func (e *Engine) Snoozer(op *Operation) providers.Recorder {
	if e.tasks == nil {
		return recorder{e: e, op: op}
	}
	return recorder{e: e, op: op, snooze: true}
}

// Work runs one operation's job from the step it reached: River's worker
// calls it. The operation's advisory lock, held on one connection for the
// run, makes sure one worker runs it at a time, and is let go if that
// worker's process dies, so Recover can resume it. A job whose operation
// waits for a provider task asks the provider and snoozes again while the
// task runs, holding nothing in between.
func (e *Engine) Work(ctx context.Context, args Args) error {
	return e.run(ctx, args.Op, args.OpKind)
}

// Run runs an operation now in this goroutine, as its job would; an
// operation another worker holds is left to it. It starts with the
// engine's start, as a job that names no kind does.
func (e *Engine) Run(ctx context.Context, id string) error {
	return e.run(ctx, id, "")
}

// start takes the operation's lock and marks it started, with the kind's
// own start when kind has one, else (and when that one answers no row)
// with OpTryStart. It answers the runner bound to what the kind's own
// start read, nil after the engine's start. No row: another worker runs
// it, or it has ended, and nothing is held.
func (e *Engine) start(ctx context.Context, conn DB, id, kind string) (db.Operation, func(context.Context, *Operation) error, error) {
	e.mu.RLock()
	own := e.kinds[kind].start
	e.mu.RUnlock()
	if own != nil {
		r, run, err := own(ctx, conn, id)
		if !errors.Is(err, pgx.ErrNoRows) {
			return r, run, err
		}
		// Held, ended, or what the kind reads with its start is gone: the
		// engine's start tells, and the runner reads for itself.
	}
	r, err := e.st.OpTryStart(ctx, conn, id)
	return db.Operation(r), nil, err
}

func (e *Engine) run(ctx context.Context, id, kind string) error {
	conn, err := e.st.Pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("run %s: %w", id, err)
	}
	defer conn.Release()
	unlock := func() { _, _ = e.st.OpUnlock(context.WithoutCancel(ctx), conn, id) }
	held := &runLock{id: id, conn: conn}
	// The lock and the start in one statement, on the lock's own
	// connection: no row when another worker runs it or it has ended
	// (done, failed or unknown already), and then this connection holds
	// nothing.
	r, run, err := e.start(ctx, conn, id, kind)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		// The statement may have got the lock before it failed, and a
		// session's lock outlives its statement's rollback.
		unlock()
		return fmt.Errorf("run %s: %w", id, err)
	}
	// Let go as the run returns, unless its end let go already.
	defer func() {
		if held.release() {
			unlock()
		}
	}()
	ctx = context.WithValue(ctx, runLockKey{}, held)
	op := FromRow(r)
	op.Resuming = op.Resumes > 0
	if op.TaskWaiting {
		out, wait, err := e.taskNow(ctx, op)
		if err != nil || wait {
			return err
		}
		op.TaskEnded, op.TaskWaiting, op.Resuming = &out, false, true
	}
	if run == nil || op.Kind != kind {
		e.mu.RLock()
		run = e.kinds[op.Kind].run
		e.mu.RUnlock()
	}
	if run == nil {
		return e.End(ctx, op, Failed, "boxsnap does not know this kind of operation: "+op.Kind, "")
	}
	err = run(ctx, op)
	if Pending(err) {
		return river.JobSnooze(e.snooze)
	}
	return err
}

// runLock is a run's connection, which holds its operation's session
// lock: the run's context carries it to the operation's end, which lets
// the lock go in its own statement (OpEndAlone's let_go) where Run would
// send one more after it.
type runLock struct {
	id   string
	mu   sync.Mutex
	conn *pgxpool.Conn // nil once the lock is let go or the run returned
}

type runLockKey struct{}

// heldLock is the run's lock ctx carries when it is op's and still held.
func heldLock(ctx context.Context, id string) *runLock {
	l, _ := ctx.Value(runLockKey{}).(*runLock)
	if l == nil || l.id != id {
		return nil
	}
	return l
}

// release marks the run returned and reports whether its lock is still
// held, for the run to let go.
func (l *runLock) release() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	held := l.conn != nil
	l.conn = nil
	return held
}

// taskNow asks the provider where op's task got to. wait says the job
// snoozed again (err is River's snooze); otherwise the task has ended and
// is no longer waited for.
func (e *Engine) taskNow(ctx context.Context, op *Operation) (providers.TaskOutcome, bool, error) {
	var ref providers.TaskRef
	if err := json.Unmarshal(op.Task, &ref); err != nil || e.tasks == nil {
		// Nothing to ask: run the step again, resuming, as after a restart.
		out := providers.TaskOutcome{ExitStatus: "boxsnap could not read the task it waited for"}
		return out, false, e.taskWaited(ctx, op)
	}
	out, err := e.tasks(ctx, op, ref)
	if err != nil {
		// The host does not answer: look again later, holding nothing.
		e.logger.Warn("a provider task could not be read; the operation looks again", "operation", op.ID, "task", ref.ID, "err", err)
		return out, true, river.JobSnooze(e.snooze)
	}
	if out.Running {
		return out, true, river.JobSnooze(e.snooze)
	}
	return out, false, e.taskWaited(ctx, op)
}

func (e *Engine) taskWaited(ctx context.Context, op *Operation) error {
	if err := e.st.OpTaskWaited(ctx, e.st.Pool, op.ID); err != nil {
		return fmt.Errorf("run %s: %w", op.ID, err)
	}
	return nil
}

// Recover resumes every operation that a worker started or fetched and no
// worker runs now (its process died): it queues a new attempt that goes on
// from the step it reached. A started one is nobody's when no session holds
// its run lock; one fetched and not started, when the worker that fetched
// it holds no presence lock (Presence), so it is resumed at the first
// recover after its worker died, however recently that worker fetched it.
// A second attempt of one that still runs does nothing: the operation's
// lock lets one worker run it. One whose job snoozed on its provider task
// is left to that job. serve and work call it at start, and each working
// process's presence at each recover interval (Presence), for workers that
// die while others live, whichever of them is River's leader; the periodic
// recover job calls it too. It frees the other jobs a dead worker left
// running first (FreeDeadJobs).
func (e *Engine) Recover(ctx context.Context) (int, error) {
	if _, err := e.FreeDeadJobs(ctx); err != nil {
		return 0, fmt.Errorf("recover: %w", err)
	}
	n, err := e.recover(ctx, nil)
	if err != nil {
		return n, err
	}
	if n > 0 {
		e.logger.Info("resumed operations cut short", "count", n)
	}
	// The jobs a killed worker left running: finished once their operation
	// ended (at once when their worker is dead; else a few seconds after,
	// so a live worker's own completion goes first), or once a resume
	// replaced them.
	jobs, err := e.st.OpFinishStaleJobs(ctx, e.st.Pool, time.Now().Add(-staleJobAfter))
	if err != nil {
		return n, fmt.Errorf("recover: finish stale jobs: %w", err)
	}
	if len(jobs) > 0 {
		e.logger.Info("finished the jobs a stopped worker left running", "jobs", jobs)
	}
	return n, nil
}

// RecoverOne resumes one running operation as Recover would: when no live
// worker holds it or its job. It reports whether it queued a new attempt
// (Check now, on an operation that still reads running).
func (e *Engine) RecoverOne(ctx context.Context, id string) (bool, error) {
	n, err := e.recover(ctx, &id)
	return n > 0, err
}

func (e *Engine) recover(ctx context.Context, only *string) (int, error) {
	rows, err := e.st.OpResumable(ctx, e.st.Pool, only)
	if err != nil {
		return 0, fmt.Errorf("recover: %w", err)
	}
	n := 0
	for _, r := range rows {
		resumed, err := e.Resume(ctx, FromRow(r), false)
		if err != nil {
			return n, err
		}
		if resumed {
			n++
		}
	}
	return n, nil
}

// staleJobAfter is how long after its operation ended a job still shown
// running is taken as left behind by a killed worker.
const staleJobAfter = 10 * time.Second

// Resume queues a new attempt of op if no worker holds its lock. With
// fromUnknown, an operation that could not be confirmed runs again from the
// step it reached (Check now).
func (e *Engine) Resume(ctx context.Context, op *Operation, fromUnknown bool) (bool, error) {
	free, err := e.lockFree(ctx, op.ID)
	if err != nil || !free {
		return false, err // !free: a live worker runs it
	}
	err = store.InTx(ctx, e.st.Pool, func(tx pgx.Tx) error {
		again, err := row(e.st.OpLock(ctx, tx, op.ID))
		if err != nil {
			return err
		}
		if again.State == Done || again.State == Failed || (again.State == Unknown && !fromUnknown) {
			return ErrNotFound
		}
		if again.Resumes != op.Resumes && !fromUnknown {
			return ErrNotFound // someone resumed it meanwhile
		}
		again.Resumes++
		e.ends.forget(again.ID) // it runs again: its last end is no longer its end
		if err := e.st.OpResumeMark(ctx, tx, db.OpResumeMarkParams{ID: again.ID, Resumes: again.Resumes}); err != nil {
			return err
		}
		box := ""
		if again.BoxID != nil {
			box = *again.BoxID
		}
		opts, err := e.jobOpts(ctx, tx, box, again.Params)
		if err != nil {
			return err
		}
		_, err = e.jobs.InsertTx(ctx, tx, Args{Box: box, Op: again.ID, Resume: again.Resumes, OpKind: again.Kind}, opts)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("resume %s: %w", op.ID, err)
	}
	return true, nil
}

// lockFree reports whether no worker holds an operation's lock now.
func (e *Engine) lockFree(ctx context.Context, id string) (bool, error) {
	conn, err := e.st.Pool.Acquire(ctx)
	if err != nil {
		return false, fmt.Errorf("resume %s: %w", id, err)
	}
	defer conn.Release()
	free, err := e.st.OpTryLock(ctx, conn, id)
	if err != nil {
		return false, fmt.Errorf("resume %s: %w", id, err)
	}
	if !free {
		return false, nil
	}
	// Let the lock go before queueing: the new attempt takes it.
	if _, err := e.st.OpUnlock(ctx, conn, id); err != nil {
		return false, fmt.Errorf("resume %s: %w", id, err)
	}
	return true, nil
}
