package snapshots

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/providers"
)

// opRequest is what admit records.
type opRequest struct {
	Kind      string
	Box       *Box
	Target    *Snapshot
	Pins      []string
	Caller    Caller
	RequestID string
	Params    any
	Consent   any
}

// requestKey scopes a caller's request ID to the caller, so one thread's
// request ID never names another's operation.
func requestKey(c Caller, id string) *string {
	if id == "" {
		return nil
	}
	k := fmt.Sprintf("%s:%s:%s", c.Kind, c.Thread, id)
	return &k
}

// existingRequest returns the operation a repeated request ID already made,
// or a refusal when that ID was used for a different operation.
func (s *Service) existingRequest(ctx context.Context, q pgxQuerier, c Caller, requestID, kind string, target *string) (*Operation, error) {
	key := requestKey(c, requestID)
	if key == nil {
		return nil, nil
	}
	op, err := s.opByQuery(ctx, q, "CoreOpByRequest", *key)
	if errors.Is(err, errNoRow) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if op.Kind != kind || (target != nil && (op.Target == nil || *op.Target != *target)) {
		return nil, refuse(CodeConflict, "The request ID %s was used for another operation (%s %s).", requestID, op.Kind, op.ID)
	}
	return op, nil
}

// admit records an operation in tx, with the box's row already locked: the
// row first, before anything changes, and its River job in the same
// transaction when no earlier operation of the box is running. Otherwise it
// waits; finish starts it when the one before ends. An operation of no box
// (r.Box nil) is queued at once.
func (s *Service) admit(ctx context.Context, tx pgx.Tx, r opRequest) (*Operation, error) {
	if s.jobs == nil {
		return nil, errors.New("snapshots: no job client (UseJobs was not called)")
	}
	params, _ := json.Marshal(r.Params)
	var consent []byte
	if r.Consent != nil {
		consent, _ = json.Marshal(r.Consent)
	}
	var target *string
	if r.Target != nil {
		target = &r.Target.ID
	}
	pins := r.Pins
	if pins == nil {
		pins = []string{}
	}
	id := NewID(PrefixOperation)
	var boxID *string
	generation := 1
	if r.Box != nil {
		boxID, generation = &r.Box.ID, r.Box.Generation
	}
	op, err := s.opByQuery(ctx, tx, "CoreOpInsert", id, requestKey(r.Caller, r.RequestID), r.Kind, boxID, generation,
		target, pins, r.Caller.byKind(), r.Caller.thread(), consent, params)
	if err != nil {
		return nil, fmt.Errorf("record operation: %w", err)
	}
	if r.Box == nil {
		// Of no box yet (an import making its box): nothing to wait for.
		if err := s.queue(ctx, tx, op); err != nil {
			return nil, err
		}
		return op, nil
	}
	var active int
	if err := tx.QueryRow(ctx, s.st.Q("CoreOpActiveOnBox"), r.Box.ID, id).Scan(&active); err != nil {
		return nil, fmt.Errorf("read the box's operations: %w", err)
	}
	if active == 0 {
		if err := s.queue(ctx, tx, op); err != nil {
			return nil, err
		}
	}
	return op, nil
}

// queue inserts op's River job in tx and marks it queued.
func (s *Service) queue(ctx context.Context, tx pgx.Tx, op *Operation) error {
	box := ""
	if op.BoxID != nil {
		box = *op.BoxID
	}
	if _, err := s.jobs.InsertTx(ctx, tx, OperationArgs{Box: box, Op: op.ID, Resume: op.Resumes}, nil); err != nil {
		return fmt.Errorf("queue operation %s: %w", op.ID, err)
	}
	if _, err := tx.Exec(ctx, s.st.Q("CoreOpQueue"), op.ID); err != nil {
		return fmt.Errorf("queue operation %s: %w", op.ID, err)
	}
	op.Step = StepQueued
	return nil
}

// lockBox locks a box's row for the transaction: admissions and ends of a
// box's operations are serialised on it.
func (s *Service) lockBox(ctx context.Context, tx pgx.Tx, id string) (*Box, error) {
	rows, err := tx.Query(ctx, s.st.Q("CoreBoxLock"), id)
	if err != nil {
		return nil, fmt.Errorf("lock box: %w", err)
	}
	b, err := pgx.CollectExactlyOneRow(rows, pgx.RowToAddrOfStructByName[Box])
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, boxNotFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("lock box: %w", err)
	}
	return b, nil
}

// unsettledRefusal refuses a new operation on a box whose last operation
// could not be confirmed, until Check now settles it.
func (s *Service) unsettled(ctx context.Context, q pgxQuerier, b *Box) error {
	rows, err := q.Query(ctx, s.st.Q("CoreOpUnsettled"), b.ID)
	if err != nil {
		return fmt.Errorf("read the box's operations: %w", err)
	}
	ops, err := pgx.CollectRows(rows, pgx.RowToAddrOfStructByName[Operation])
	if err != nil {
		return fmt.Errorf("read the box's operations: %w", err)
	}
	if len(ops) == 0 {
		return nil
	}
	return refuse(CodeBusy, "%s Check now first.", UnknownWords(b.Name, ops[0]))
}

func (s *Service) opByQuery(ctx context.Context, q pgxQuerier, name string, args ...any) (*Operation, error) {
	rows, err := q.Query(ctx, s.st.Q(name), args...)
	if err != nil {
		return nil, err
	}
	op, err := pgx.CollectExactlyOneRow(rows, pgx.RowToAddrOfStructByName[Operation])
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errNoRow
	}
	return op, err
}

// Operation reads an operation as the caller may see it: an agent sees only
// its own thread's.
func (s *Service) Operation(ctx context.Context, c Caller, id string) (*Operation, error) {
	if !ValidID(PrefixOperation, id) {
		return nil, refuse(CodeNotFound, "No operation %s that you can see.", id)
	}
	op, err := s.opByQuery(ctx, s.st.Pool, "CoreOpByID", id)
	if errors.Is(err, errNoRow) || (err == nil && c.Kind == CallerAgent && (op.ByThreadID == nil || *op.ByThreadID != c.Thread)) {
		return nil, refuse(CodeNotFound, "No operation %s that you can see.", id)
	}
	return op, err
}

// operationEnded is the channel finish notifies, with the operation's ID,
// so a wait ends the moment its operation does, with no polling delay.
const operationEnded = "boxsnap_operation_ended"

// waitRecheck bounds how long a wait trusts the notification alone: it
// reads the operation again at least this often.
const waitRecheck = time.Second

// Wait waits until the operation ends or ctx does, and returns it as it is
// then. It listens for finish's notification; without a connection to
// listen on, it reads the operation every 15 ms instead.
func (s *Service) Wait(ctx context.Context, id string) (*Operation, error) {
	// The reads are not cut by ctx: ctx bounds the wait, and the answer is
	// the operation as it is when the wait ends.
	read := func() (*Operation, error) {
		op, err := s.opByQuery(context.WithoutCancel(ctx), s.st.Pool, "CoreOpByID", id)
		if err != nil {
			return nil, fmt.Errorf("read operation %s: %w", id, err)
		}
		return op, nil
	}
	conn, err := s.st.Pool.Acquire(ctx)
	if err == nil {
		_, err = conn.Exec(ctx, "LISTEN "+operationEnded)
		if err != nil {
			conn.Release()
		}
	}
	if err != nil {
		return s.pollWait(ctx, read)
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "UNLISTEN "+operationEnded)
		conn.Release()
	}()
	for {
		op, err := read()
		if err != nil || op.State != OpRunning || ctx.Err() != nil {
			return op, err
		}
		for {
			wctx, cancel := context.WithTimeout(ctx, waitRecheck)
			n, err := conn.Conn().WaitForNotification(wctx)
			cancel()
			if err != nil || n.Payload == id {
				break // ended, timed out, or ctx is done: read it again
			}
		}
	}
}

func (s *Service) pollWait(ctx context.Context, read func() (*Operation, error)) (*Operation, error) {
	tick := time.NewTicker(15 * time.Millisecond)
	defer tick.Stop()
	for {
		op, err := read()
		if err != nil || op.State != OpRunning {
			return op, err
		}
		select {
		case <-ctx.Done():
			return op, nil
		case <-tick.C:
		}
	}
}

// step records the step an operation is at, before it runs it (section 6).
func (s *Service) step(ctx context.Context, op *Operation, step string) error {
	if _, err := s.st.Pool.Exec(ctx, s.st.Q("CoreOpStep"), op.ID, step); err != nil {
		return fmt.Errorf("record step %s of %s: %w", step, op.ID, err)
	}
	op.Step = step
	return nil
}

// finish ends an operation and, in the same transaction, queues the box's
// next waiting operation, so a box's operations follow each other with no
// polling delay. Its pins end with it.
func (s *Service) finish(ctx context.Context, op *Operation, state string, result any, errWords, observed string) error {
	var res []byte
	if result != nil {
		res, _ = json.Marshal(result)
	}
	ctx = context.WithoutCancel(ctx)
	return store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		if op.BoxID != nil {
			if _, err := s.lockBox(ctx, tx, *op.BoxID); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, s.st.Q("CoreOpEnd"), op.ID, state, res, nilIfEmpty(errWords), nilIfEmpty(observed)); err != nil {
			return fmt.Errorf("end operation %s: %w", op.ID, err)
		}
		// Sent at commit: a Wait on this operation ends at once.
		if _, err := tx.Exec(ctx, s.st.Q("CoreOpNotify"), operationEnded, op.ID); err != nil {
			return fmt.Errorf("end operation %s: %w", op.ID, err)
		}
		op.State = state
		if op.BoxID == nil || state == OpUnknown {
			// An unknown operation holds the box until Check now settles it.
			return nil
		}
		next, err := s.opByQuery(ctx, tx, "CoreOpNextWaiting", *op.BoxID)
		if errors.Is(err, errNoRow) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("next operation: %w", err)
		}
		return s.queue(ctx, tx, next)
	})
}

// pins lists the operations other than except that pin snapshot id.
func (s *Service) pins(ctx context.Context, q pgxQuerier, id, except string) ([]Pin, error) {
	rows, err := q.Query(ctx, s.st.Q("CorePins"), id, except)
	if err != nil {
		return nil, fmt.Errorf("read pins: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByName[Pin])
}

// changeNow locks a box's row and one of its snapshots for tx and asks
// Eligible about change at this moment, counting the pins of the
// operations running now (only deletes' for a restore's or a fork's target,
// which wait for a take or a restore in the box's turn). It answers the box
// and the snapshot as they are now. ref is the caller's words for the
// snapshot, for a refusal.
func (s *Service) changeNow(ctx context.Context, tx pgx.Tx, boxID, snapID, ref string, change Change) (*Box, *Snapshot, error) {
	b, err := s.lockBox(ctx, tx, boxID)
	if err != nil {
		return nil, nil, err
	}
	sn, err := s.snapshotByQuery(ctx, tx, "CoreSnapshotLock", snapID)
	if err != nil {
		return nil, nil, snapshotNotFound(ref)
	}
	var pins []Pin
	if change == ChangeRestore || change == ChangeFork {
		pins, err = s.deletingPins(ctx, tx, sn.ID, "")
	} else {
		pins, err = s.pins(ctx, tx, sn.ID, "")
	}
	if err != nil {
		return nil, nil, err
	}
	if err := Eligible(sn, change, pins, s.now(), s.TimeZone(ctx)); err != nil {
		return nil, nil, err
	}
	return b, sn, nil
}

// deletingPins lists the operations other than except that delete snapshot
// id. A restore or a fork waits in the box's turn for a take or a restore
// that uses its snapshot, and is refused only while the snapshot is being
// deleted (section 5, step 1).
func (s *Service) deletingPins(ctx context.Context, q pgxQuerier, id, except string) ([]Pin, error) {
	pins, err := s.pins(ctx, q, id, except)
	if err != nil {
		return nil, err
	}
	var out []Pin
	for _, p := range pins {
		if p.Kind == OpDelete || p.Kind == OpExpiry || p.Kind == OpThin || p.Kind == OpDeleteHistory {
			out = append(out, p)
		}
	}
	return out, nil
}

// opRecorder records a backend's task on its operation before the backend
// waits for it.
type opRecorder struct {
	s  *Service
	op *Operation
}

func (r opRecorder) TaskStarted(ctx context.Context, task providers.TaskRef) error {
	raw, _ := json.Marshal(task)
	if _, err := r.s.st.Pool.Exec(ctx, r.s.st.Q("CoreOpSetTask"), r.op.ID, raw); err != nil {
		return fmt.Errorf("record task of %s: %w", r.op.ID, err)
	}
	r.op.Task = raw
	return nil
}

// RunOperation runs one operation from the step it reached: the worker of
// its River job calls it. The operation's advisory lock, held on one
// connection for the run, makes sure one worker runs it at a time, and is
// let go if that worker's process dies, so Recover can resume it.
func (s *Service) RunOperation(ctx context.Context, id string) error {
	conn, err := s.st.Pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("run %s: %w", id, err)
	}
	defer conn.Release()
	var got bool
	if err := conn.QueryRow(ctx, s.st.Q("CoreTryOpLock"), id).Scan(&got); err != nil {
		return fmt.Errorf("run %s: %w", id, err)
	}
	if !got {
		return nil // another worker runs it
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), s.st.Q("CoreOpUnlock"), id) }()

	op, err := s.opByQuery(ctx, s.st.Pool, "CoreOpStart", id)
	if errors.Is(err, errNoRow) {
		return nil // done, failed or unknown already
	}
	if err != nil {
		return fmt.Errorf("run %s: %w", id, err)
	}
	resuming := op.Resumes > 0
	switch op.Kind {
	case OpTake:
		return s.runTake(ctx, op, resuming)
	case OpDelete, OpExpiry:
		return s.runDelete(ctx, op, resuming)
	case OpRestore:
		return s.runRestore(ctx, op, resuming)
	case OpKeep, OpUnkeep:
		return s.runKeep(ctx, op, resuming)
	case OpRelease:
		return s.runRelease(ctx, op, resuming)
	case OpFork:
		return s.runFork(ctx, op)
	case OpImport:
		return s.runImport(ctx, op)
	case OpThin, OpDeleteHistory:
		return s.runThin(ctx, op)
	}
	return s.finish(ctx, op, OpFailed, nil, "boxsnap does not know this kind of operation: "+op.Kind, "")
}

// Recover resumes every operation that a worker started or picked and no
// worker runs now (its process died): it queues a new attempt that goes on
// from the step it reached. A second attempt of one that still runs does
// nothing: the operation's lock lets one worker run it. serve and work call it at start; the reconcile calls it
// again, for workers that die while others live.
func (s *Service) Recover(ctx context.Context) (int, error) {
	rows, err := s.st.Pool.Query(ctx, s.st.Q("CoreOpResume"))
	if err != nil {
		return 0, fmt.Errorf("recover: %w", err)
	}
	ops, err := pgx.CollectRows(rows, pgx.RowToAddrOfStructByName[Operation])
	if err != nil {
		return 0, fmt.Errorf("recover: %w", err)
	}
	n := 0
	for _, op := range ops {
		resumed, err := s.resume(ctx, op, false)
		if err != nil {
			return n, err
		}
		if resumed {
			n++
		}
	}
	if n > 0 {
		s.logger.Info("resumed operations cut short", "count", n)
	}
	// The jobs a killed worker left running: finished once their operation
	// ended (a few seconds ago, so a live worker's own completion goes
	// first), or once a resume replaced them.
	rows, err = s.st.Pool.Query(ctx, s.st.Q("SecurityFinishStaleJobs"), s.now().Add(-staleJobAfter))
	if err != nil {
		return n, fmt.Errorf("recover: finish stale jobs: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return n, fmt.Errorf("recover: finish stale jobs: %w", err)
	}
	if len(ids) > 0 {
		s.logger.Info("finished the jobs a stopped worker left running", "jobs", ids)
	}
	return n, nil
}

// staleJobAfter is how long after its operation ended a job still shown
// running is taken as left behind by a killed worker.
const staleJobAfter = 10 * time.Second

// resume queues a new attempt of op if no worker holds its lock.
func (s *Service) resume(ctx context.Context, op *Operation, fromUnknown bool) (bool, error) {
	conn, err := s.st.Pool.Acquire(ctx)
	if err != nil {
		return false, fmt.Errorf("resume %s: %w", op.ID, err)
	}
	defer conn.Release()
	var free bool
	if err := conn.QueryRow(ctx, s.st.Q("CoreTryOpLock"), op.ID).Scan(&free); err != nil {
		return false, fmt.Errorf("resume %s: %w", op.ID, err)
	}
	if !free {
		return false, nil // a live worker runs it
	}
	// Let the lock go before queueing: the new attempt takes it.
	if _, err := conn.Exec(ctx, s.st.Q("CoreOpUnlock"), op.ID); err != nil {
		return false, fmt.Errorf("resume %s: %w", op.ID, err)
	}
	err = store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		again, err := s.opByQuery(ctx, tx, "CoreOpLock", op.ID)
		if err != nil {
			return err
		}
		if again.State == OpDone || again.State == OpFailed || (again.State == OpUnknown && !fromUnknown) {
			return errNoRow
		}
		if again.Resumes != op.Resumes && !fromUnknown {
			return errNoRow // someone resumed it meanwhile
		}
		again.Resumes++
		if _, err := tx.Exec(ctx, s.st.Q("CoreOpResumeMark"), again.ID, again.Resumes); err != nil {
			return err
		}
		box := ""
		if again.BoxID != nil {
			box = *again.BoxID
		}
		_, err = s.jobs.InsertTx(ctx, tx, OperationArgs{Box: box, Op: again.ID, Resume: again.Resumes}, nil)
		return err
	})
	if errors.Is(err, errNoRow) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("resume %s: %w", op.ID, err)
	}
	return true, nil
}

// CheckNow re-observes an operation that could not be confirmed: it runs
// again from the step it reached, and settles as done, failed or unknown
// with what it found (section 6).
func (s *Service) CheckNow(ctx context.Context, c Caller, id string) (*Operation, error) {
	op, err := s.Operation(ctx, c, id)
	if err != nil {
		return nil, err
	}
	if op.State != OpUnknown {
		return op, nil
	}
	if _, err := s.resume(ctx, op, true); err != nil {
		return nil, err
	}
	return s.opByQuery(ctx, s.st.Pool, "CoreOpByID", id)
}
