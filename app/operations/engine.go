package operations

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// Inserter inserts a River job in a transaction; *river.Client[pgx.Tx] is
// one.
type Inserter interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// DB is what a query runs on: the pool or a transaction.
type DB = db.DBTX

// TaskReader asks the provider of an operation's box where a task got to
// (providers.Backend.ProviderTask); the core gives it, as it knows which
// backend an operation's box is on.
type TaskReader func(ctx context.Context, op *Operation, task providers.TaskRef) (providers.TaskOutcome, error)

// Options configure the engine.
type Options struct {
	Store  *store.Store
	Logger *slog.Logger
	// Snooze is how long a job sleeps between two looks at its provider
	// task; 0 means DefaultSnooze.
	Snooze time.Duration
}

// DefaultSnooze is how long a job sleeps between two looks at its
// provider task: Proxmox's own task list refreshes about as often.
const DefaultSnooze = time.Second

// Engine admits, queues, runs, finishes, recovers and waits for
// operations.
type Engine struct {
	st     *store.Store
	logger *slog.Logger
	snooze time.Duration
	jobs   Inserter
	tasks  TaskReader
	kinds  map[string]kindRun
	ends   *listener
	// recheck is how long a wait trusts the notification alone
	// (waitRecheck; a test sets it longer, so a wait ends only on what it
	// heard).
	recheck time.Duration
	mu      sync.RWMutex
}

// New makes the engine. Runners are registered with Register before work
// starts.
func New(opts Options) (*Engine, error) {
	if opts.Store == nil {
		return nil, errors.New("operations: a store is required")
	}
	e := &Engine{st: opts.Store, logger: opts.Logger, snooze: opts.Snooze, kinds: map[string]kindRun{}, recheck: waitRecheck}
	if e.logger == nil {
		e.logger = slog.New(slog.DiscardHandler)
	}
	if e.snooze <= 0 {
		e.snooze = DefaultSnooze
	}
	e.ends = newListener(opts.Store.Pool, e.logger)
	return e, nil
}

// UseJobs gives the engine River's client, made after the engine because
// its workers call it.
func (e *Engine) UseJobs(j Inserter) { e.jobs = j }

// UseTasks gives the engine the core's way to ask a provider about a task.
func (e *Engine) UseTasks(t TaskReader) { e.tasks = t }

// ErrNotFound is an operation that is not there.
var ErrNotFound = store.ErrNotFound

// Kind is one registered kind of operation, with its typed parameters and
// result.
type Kind[P, R any] struct {
	name string
	e    *Engine
}

// kindRun is how the engine runs one registered kind: run, after the
// engine's start; start, when the kind has its own, which answers the
// operation's row and the runner bound to what it read.
type kindRun struct {
	run   func(ctx context.Context, op *Operation) error
	start func(ctx context.Context, conn DB, id string) (db.Operation, func(context.Context, *Operation) error, error)
}

// Register makes kind run by run: the engine decodes the operation's
// parameters as P (a failure fails the operation, in words) and, when run
// answers a result with no error and has not ended the operation itself
// (with Engine.End or Kind.EndWith), records that result and finishes it
// done, in the statement or transaction that ends it. An error from run
// leaves the operation running: River tries the job again, or snoozes it
// on a provider task (ErrTaskPending).
func Register[P, R any](e *Engine, kind string, run func(ctx context.Context, op *Operation, p P) (R, error)) *Kind[P, R] {
	return register(e, kind, nil, func(ctx context.Context, op *Operation, p P, _ struct{}) (R, error) {
		return run(ctx, op, p)
	})
}

// Start is a kind's own start of a run: one statement, on the run's
// connection conn, that takes the operation's session lock and marks it
// started as OpTryStart does (only when this session got the lock, the
// operation's row read as the last worker holding the lock committed it),
// with what the kind's runner reads first. It answers the operation's row
// and what it read, B, which the engine hands the kind's runner. No row
// (pgx.ErrNoRows): it wrote nothing and holds no lock, and the engine
// starts the run itself, so a start may answer no row for whatever its
// own reads do not find.
type Start[B any] func(ctx context.Context, conn DB, id string) (db.Operation, B, error)

// RegisterStarting is Register for a kind whose runs begin with its own
// start: a job of the kind (Args.OpKind) begins with start, and run is
// handed what start read as begun. A run that began with the engine's
// start instead (start answered no row, or Run, which names no kind) is
// handed B's zero value, and its runner reads for itself.
func RegisterStarting[P, R, B any](e *Engine, kind string, start Start[B], run func(ctx context.Context, op *Operation, p P, begun B) (R, error)) *Kind[P, R] {
	return register(e, kind, start, run)
}

func register[P, R, B any](e *Engine, kind string, start Start[B], run func(ctx context.Context, op *Operation, p P, begun B) (R, error)) *Kind[P, R] {
	k := &Kind[P, R]{name: kind, e: e}
	runWith := func(begun B) func(context.Context, *Operation) error {
		return func(ctx context.Context, op *Operation) error {
			p, err := k.Params(op)
			if err != nil {
				return e.End(ctx, op, Failed, "boxsnap could not read its parameters: "+err.Error(), "")
			}
			r, err := run(ctx, op, p, begun)
			if err != nil {
				return err
			}
			if op.State != Running {
				return nil // the runner ended it
			}
			return endWith(ctx, e, op, Done, r, "", "")
		}
	}
	var none B
	kr := kindRun{run: runWith(none)}
	if start != nil {
		kr.start = func(ctx context.Context, conn DB, id string) (db.Operation, func(context.Context, *Operation) error, error) {
			r, begun, err := start(ctx, conn, id)
			if err != nil {
				return r, nil, err
			}
			return r, runWith(begun), nil
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, dup := e.kinds[kind]; dup {
		panic("operations: kind " + kind + " registered twice")
	}
	e.kinds[kind] = kr
	return k
}

// Name is the kind's name, as operations record it.
func (k *Kind[P, R]) Name() string { return k.name }

// Params decodes an operation's parameters; an operation of no parameters
// answers P's zero value.
func (k *Kind[P, R]) Params(op *Operation) (P, error) {
	var p P
	if len(op.Params) == 0 || string(op.Params) == "null" {
		return p, nil
	}
	if err := json.Unmarshal(op.Params, &p); err != nil {
		return p, fmt.Errorf("parameters of %s %s: %w", op.Kind, op.ID, err)
	}
	return p, nil
}

// Result decodes a finished operation's result. An operation that ended
// with no result answers ErrNotFound.
func (k *Kind[P, R]) Result(op *Operation) (R, error) {
	var r R
	if len(op.Result) == 0 || string(op.Result) == "null" {
		return r, fmt.Errorf("result of %s %s: %w", op.Kind, op.ID, ErrNotFound)
	}
	if err := json.Unmarshal(op.Result, &r); err != nil {
		return r, fmt.Errorf("result of %s %s: %w", op.Kind, op.ID, err)
	}
	return r, nil
}

// Request is what Admit records. Box is nil for an operation of no box yet
// (an import making its box).
type Request struct {
	Kind       string
	Box        *string
	Generation int
	Target     *string
	Pins       []string
	ByKind     string
	ByThread   *string
	RequestKey *string
	Consent    any
	Params     any
	// Reserved is what the operation holds until it ends (the core's room
	// reservation), recorded with it; nil: nothing.
	Reserved any
}

func (e *Engine) insert(ctx context.Context, tx DB, r Request) (*Operation, error) {
	arg, err := insertArg(r)
	if err != nil {
		return nil, err
	}
	op, err := row(e.st.OpInsert(ctx, tx, arg))
	if err != nil {
		return nil, fmt.Errorf("record operation: %w", err)
	}
	if op.BoxID != nil {
		if err := e.BoxChanged(ctx, tx, *op.BoxID); err != nil {
			return nil, err
		}
	}
	return op, nil
}

// insertArg is what OpInsert records of r, with the operation's new ID.
func insertArg(r Request) (db.OpInsertParams, error) {
	params, err := json.Marshal(r.Params)
	if err != nil {
		return db.OpInsertParams{}, fmt.Errorf("record operation: %w", err)
	}
	if r.Params == nil {
		params = []byte("{}")
	}
	var consent []byte
	if r.Consent != nil {
		if consent, err = json.Marshal(r.Consent); err != nil {
			return db.OpInsertParams{}, fmt.Errorf("record operation: %w", err)
		}
	}
	var reserved []byte
	if r.Reserved != nil {
		if reserved, err = json.Marshal(r.Reserved); err != nil {
			return db.OpInsertParams{}, fmt.Errorf("record operation: %w", err)
		}
	}
	pins := r.Pins
	if pins == nil {
		pins = []string{}
	}
	gen := r.Generation
	if gen == 0 {
		gen = 1
	}
	return db.OpInsertParams{ID: NewID(), RequestKey: r.RequestKey, Kind: r.Kind, BoxID: r.Box, Generation: gen, Target: r.Target,
		Snapshots: pins, ByKind: r.ByKind, ByThreadID: r.ByThread, Consent: consent, Params: params, Reserved: reserved}, nil
}

// Admit records an operation in tx, with its box's row already locked by
// the caller (admissions and ends of a box's operations are serialised on
// it): the row first, before anything changes, and its River job in the
// same transaction when no earlier operation of the box is running.
// Otherwise it waits; the end of the one before queues it. An operation of
// no box is queued at once.
func (e *Engine) Admit(ctx context.Context, tx pgx.Tx, r Request) (*Operation, error) {
	if e.jobs == nil {
		return nil, errors.New("operations: no job client (UseJobs was not called)")
	}
	op, err := e.insert(ctx, tx, r)
	if err != nil {
		return nil, err
	}
	if op.Step != StepQueued {
		return op, nil // it waits for its box's running operation
	}
	if err := e.insertJob(ctx, tx, op); err != nil {
		return nil, err
	}
	return op, nil
}

// AdmitWith is Admit for an admission whose own statement records the
// operation with what it writes beside it: insert runs that statement with
// OpInsert's arguments as the engine makes them (the operation's new ID
// among them) and answers the row it inserted, which it records as
// OpInsert does (queued when no other operation of the box runs, else
// waiting, with the box's running ones marked followed). The engine then
// queues its job as Admit does.
func (e *Engine) AdmitWith(ctx context.Context, tx pgx.Tx, r Request, insert func(arg db.OpInsertParams) (db.Operation, error)) (*Operation, error) {
	if e.jobs == nil {
		return nil, errors.New("operations: no job client (UseJobs was not called)")
	}
	arg, err := insertArg(r)
	if err != nil {
		return nil, err
	}
	raw, err := insert(arg)
	if err != nil {
		return nil, err
	}
	op := FromRow(raw)
	if op.BoxID != nil {
		if err := e.BoxChanged(ctx, tx, *op.BoxID); err != nil {
			return nil, err
		}
	}
	if op.Step != StepQueued {
		return op, nil // it waits for its box's running operation
	}
	if err := e.insertJob(ctx, tx, op); err != nil {
		return nil, err
	}
	return op, nil
}

// Admit records an operation of this kind with its typed parameters.
func (k *Kind[P, R]) Admit(ctx context.Context, tx pgx.Tx, r Request, p P) (*Operation, error) {
	r.Kind, r.Params = k.name, p
	return k.e.Admit(ctx, tx, r)
}

// insertJob inserts op's River job in tx.
func (e *Engine) insertJob(ctx context.Context, tx pgx.Tx, op *Operation) error {
	box := ""
	if op.BoxID != nil {
		box = *op.BoxID
	}
	opts, err := e.jobOpts(ctx, tx, box, op.Params)
	if err != nil {
		return err
	}
	if _, err := e.jobs.InsertTx(ctx, tx, Args{Box: box, Op: op.ID, Resume: op.Resumes, OpKind: op.Kind}, opts); err != nil {
		return fmt.Errorf("queue operation %s: %w", op.ID, err)
	}
	return nil
}

// queue inserts a waiting op's River job in tx and marks it queued.
func (e *Engine) queue(ctx context.Context, tx pgx.Tx, op *Operation) error {
	if err := e.insertJob(ctx, tx, op); err != nil {
		return err
	}
	if err := e.st.OpQueue(ctx, tx, op.ID); err != nil {
		return fmt.Errorf("queue operation %s: %w", op.ID, err)
	}
	op.Step = StepQueued
	return nil
}

// ActiveOnBox counts the box's running operations other than except.
func (e *Engine) ActiveOnBox(ctx context.Context, q DB, box, except string) (int, error) {
	n, err := e.st.OpActiveOnBox(ctx, q, db.OpActiveOnBoxParams{BoxID: &box, ID: except})
	if err != nil {
		return 0, fmt.Errorf("read the box's operations: %w", err)
	}
	return int(n), nil
}

// ByID reads an operation; ErrNotFound when there is none.
func (e *Engine) ByID(ctx context.Context, q DB, id string) (*Operation, error) {
	return row(e.st.OpByID(ctx, q, id))
}

// ByRequest reads the operation a request key made; ErrNotFound when none.
func (e *Engine) ByRequest(ctx context.Context, q DB, key string) (*Operation, error) {
	return row(e.st.OpByRequest(ctx, q, &key))
}

// row is the operation a :one query answered; no row is ErrNotFound.
func row(r db.Operation, err error) (*Operation, error) {
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return FromRow(r), nil
}

// Step records the step an operation is at, before it runs it.
func (e *Engine) Step(ctx context.Context, op *Operation, step string) error {
	if err := e.st.OpStep(ctx, e.st.Pool, db.OpStepParams{ID: op.ID, Step: step}); err != nil {
		return fmt.Errorf("record step %s of %s: %w", step, op.ID, err)
	}
	op.Step = step
	return nil
}

// StepBoxRan records a restore's stop step, before it runs, with whether
// the box ran just before it, in one statement: a run resumed past the stop
// reads it (Operation.BoxRan).
func (e *Engine) StepBoxRan(ctx context.Context, op *Operation, step string, ran bool) error {
	if err := e.st.OpStepBoxRan(ctx, e.st.Pool, db.OpStepBoxRanParams{ID: op.ID, Step: step, BoxRan: &ran}); err != nil {
		return fmt.Errorf("record step %s of %s: %w", step, op.ID, err)
	}
	op.Step, op.BoxRan = step, &ran
	return nil
}

// End ends an operation as failed or unknown, in words (and what boxsnap
// observed), with no result. Done ends come from the runner's result.
func (e *Engine) End(ctx context.Context, op *Operation, state, words, observed string) error {
	return e.finish(ctx, op, state, nil, words, observed)
}

// operationEnded is the channel an end notifies, with the operation's ID,
// so a wait ends the moment its operation does, with no polling delay.
const operationEnded = "boxsnap_operation_ended"

// boxChanged is the channel a box's change notifies, with the box's ID:
// an operation's admission and end (OpEnd and OpEndAlone send it beside
// operationEnded), and BoxChanged. The pages that show the box follow it.
const boxChanged = "boxsnap_box_changed"

// endWith ends op with its kind's typed result, written as the JSON Result
// reads back; the engine records no result of any other type.
func endWith[R any](ctx context.Context, e *Engine, op *Operation, state string, result R, words, observed string) error {
	res, err := json.Marshal(result)
	if err != nil {
		return fmt.Errorf("end operation %s: %w", op.ID, err)
	}
	return e.finish(ctx, op, state, res, words, observed)
}

// finish ends an operation and, in the same transaction, queues the box's
// next waiting operation, so a box's operations follow each other with no
// polling delay. Its pins end with it. An operation no other waits behind
// (none was admitted waiting while it ran: OpInsert marks it followed) ends
// in one statement, OpEndAlone, with no transaction.
func (e *Engine) finish(ctx context.Context, op *Operation, state string, res []byte, words, observed string) error {
	ctx = context.WithoutCancel(ctx)
	var ended *Operation
	handed := e.ends.endingNow(op.ID)
	arg := db.OpEndAloneParams{ID: op.ID, State: state, Result: res, Error: nilIfEmpty(words),
		Observed: nilIfEmpty(observed), Channel: operationEnded}
	r, err := e.endAlone(ctx, op, arg)
	switch {
	case err == nil:
		op.State = state
		handed(FromRow(db.Operation(r)))
		return nil
	case !errors.Is(err, pgx.ErrNoRows):
		handed(nil)
		return fmt.Errorf("end operation %s: %w", op.ID, err)
	}
	// Followed, or not there: the end and the next in one transaction.
	err = store.InTx(ctx, e.st.Pool, func(tx pgx.Tx) error {
		ended = nil
		// Its box's row locked first, as admissions lock it; its
		// notification is sent at commit: a Wait on it ends at once.
		r, err := e.st.OpEnd(ctx, tx, db.OpEndParams{ID: op.ID, State: state, Result: res, Error: nilIfEmpty(words),
			Observed: nilIfEmpty(observed), Channel: operationEnded})
		switch {
		case err == nil:
			ended = FromRow(db.Operation(r))
		case !errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("end operation %s: %w", op.ID, err)
		}
		op.State = state
		if op.BoxID == nil || state == Unknown {
			// An unknown operation holds the box until Check now settles it.
			return nil
		}
		next, err := row(e.st.OpNextWaiting(ctx, tx, op.BoxID))
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("next operation: %w", err)
		}
		return e.queue(ctx, tx, next)
	})
	// This process's waits have the end as it is, with no read; after a
	// failure, they read what became of it.
	if err != nil {
		ended = nil
	}
	handed(ended)
	return err
}

// endAlone is OpEndAlone. An end done or failed inside its own run is
// sent on the run's connection and lets the run's lock go with it: no
// worker may run the operation again, so nothing needs the lock after the
// end, and the statement lets it go only once the end holds the row. An
// unknown end keeps the lock to the run's return: Check now may run an
// unknown operation again, and not while its run still returns.
func (e *Engine) endAlone(ctx context.Context, op *Operation, arg db.OpEndAloneParams) (db.OpEndAloneRow, error) {
	l := heldLock(ctx, op.ID)
	if l == nil || (arg.State != Done && arg.State != Failed) {
		return e.st.OpEndAlone(ctx, e.st.Pool, arg)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return e.st.OpEndAlone(ctx, e.st.Pool, arg)
	}
	arg.LetGo = true
	r, err := e.st.OpEndAlone(ctx, l.conn, arg)
	if err == nil {
		l.conn = nil // let go with the end
	}
	return r, err
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
