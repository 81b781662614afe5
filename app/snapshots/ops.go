package snapshots

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// OpRequest is what admit records.
type OpRequest struct {
	Kind      string
	Box       *Box
	Target    *Snapshot
	Pins      []string
	Caller    Caller
	RequestID string
	Params    any
	Consent   any
	Reserved  *Reserved // the room it holds until it ends; nil: none
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

// ExistingRequest returns the operation a repeated request ID already made,
// or a refusal when that ID was used for a different operation.
func (s *Admission) ExistingRequest(ctx context.Context, q db.DBTX, c Caller, requestID, kind string, target *string) (*Operation, error) {
	key := requestKey(c, requestID)
	if key == nil {
		return nil, nil
	}
	op, err := s.ops.ByRequest(ctx, q, *key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if op.Kind != kind || (target != nil && (op.Target == nil || *op.Target != *target)) {
		return nil, refusal(CodeRequestReused, requestIDUsedWords(requestID, op.Kind, op.ID))
	}
	return op, nil
}

// Admit records an operation in tx, with the box's row already locked: the
// row first, before anything changes, and its River job in the same
// transaction when no earlier operation of the box is running. Otherwise it
// waits; the engine starts it when the one before ends. An operation of no box
// (r.Box nil) is queued at once.
func (s *Admission) Admit(ctx context.Context, tx pgx.Tx, r OpRequest) (*Operation, error) {
	return s.ops.Admit(ctx, tx, r.Request())
}

// Request is what the engine records of r.
func (r OpRequest) Request() operations.Request {
	req := operations.Request{Kind: r.Kind, Pins: r.Pins, ByKind: r.Caller.ByKind(), ByThread: r.Caller.thread(),
		RequestKey: requestKey(r.Caller, r.RequestID), Consent: r.Consent, Params: r.Params, Generation: 1}
	if r.Target != nil {
		req.Target = &r.Target.ID
	}
	if r.Box != nil {
		req.Box, req.Generation = &r.Box.ID, r.Box.Generation
	}
	if r.Reserved != nil {
		req.Reserved = r.Reserved
	}
	return req
}

// LockBox locks a box's row for the transaction: admissions and ends of a
// box's operations are serialised on it.
func (s *Admission) LockBox(ctx context.Context, tx pgx.Tx, id string) (*Box, error) {
	b, err := BoxRow(s.st.CoreBoxLock(ctx, tx, id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, BoxNotFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("lock box: %w", err)
	}
	return b, nil
}

// unsettledRefusal refuses a new operation on a box whose last operation
// could not be confirmed, until Check now settles it.
func (s *Admission) Unsettled(ctx context.Context, q db.DBTX, b *Box) error {
	ops, err := operationRows(s.st.CoreOpUnsettled(ctx, q, b.ID))
	if err != nil {
		return fmt.Errorf("read the box's operations: %w", err)
	}
	if len(ops) == 0 {
		return nil
	}
	return refusal(CodeBusy, checkNowFirstWords(UnknownWords(b.Name, ops[0])))
}

// Operation reads an operation as the caller may see it: an agent sees only
// its own thread's.
func (s *Kernel) Operation(ctx context.Context, c Caller, id string) (*Operation, error) {
	if !ValidID(PrefixOperation, id) {
		return nil, refusal(CodeNotFound, noOperationWords(id))
	}
	op, err := s.ops.ByID(ctx, s.st.Pool, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !MaySeeOperation(c, op)) {
		return nil, refusal(CodeNotFound, noOperationWords(id))
	}
	return op, err
}

// MaySeeOperation says whether c may see op: an agent sees only its own
// thread's.
func MaySeeOperation(c Caller, op *Operation) bool {
	return c.Kind != CallerAgent || (op.ByThreadID != nil && *op.ByThreadID == c.Thread)
}

// Wait waits until the operation ends or ctx does, and returns it as it is
// then (operations.Engine.Wait).
func (s *Kernel) Wait(ctx context.Context, id string) (*Operation, error) {
	return s.ops.Wait(ctx, id)
}

// WaitMark notes the operations' listener now, before an operation is
// admitted, for WaitSince.
func (s *Kernel) WaitMark() operations.Mark { return s.ops.Mark() }

// WaitSince waits for op, admitted or read after m, to end: when the
// listener heard every end since m, with no read until it ends
// (operations.Engine.WaitSince).
func (s *Kernel) WaitSince(ctx context.Context, op *Operation, m operations.Mark) (*Operation, error) {
	return s.ops.WaitSince(ctx, op, m)
}

// step records the step an operation is at, before it runs it.
func (s *Kernel) Step(ctx context.Context, op *Operation, step string) error {
	return s.ops.Step(ctx, op, step)
}

// End ends an operation as failed or unknown, in words and with what
// boxsnap then observed, with no result (operations.Engine.End); a runner
// that ends its operation with a result does so through its own kind
// (operations.Kind.EndWith), so the result is typed.
func (s *Kernel) End(ctx context.Context, op *Operation, state, errWords, observed string) error {
	return s.ops.End(ctx, op, state, errWords, observed)
}

// pins lists the operations other than except that pin snapshot id.
func (s *Records) Pins(ctx context.Context, q db.DBTX, id, except string) ([]Pin, error) {
	rows, err := s.st.CorePins(ctx, q, db.CorePinsParams{SnapshotID: id, ExceptOp: except})
	if err != nil {
		return nil, fmt.Errorf("read pins: %w", err)
	}
	out := make([]Pin, len(rows))
	for i, r := range rows {
		out[i] = Pin(r)
	}
	return out, nil
}

// ChangeNow locks a box's row and one of its snapshots for tx and asks
// Eligible about change at this moment, counting the pins of the
// operations running now (only deletes' for a restore's or a fork's target,
// which wait for a take or a restore in the box's turn). It answers the box
// and the snapshot as they are now. ref is the caller's words for the
// snapshot, for a refusal.
func (s *Service) ChangeNow(ctx context.Context, tx pgx.Tx, boxID, snapID, ref string, change Change) (*Box, *Snapshot, error) {
	b, err := s.LockBox(ctx, tx, boxID)
	if err != nil {
		return nil, nil, err
	}
	sn, err := s.SnapshotLock(ctx, tx, snapID)
	if err != nil {
		return nil, nil, SnapshotNotFound(ref)
	}
	var pins []Pin
	if change == ChangeRestore || change == ChangeFork {
		pins, err = s.DeletingPins(ctx, tx, sn.ID, "")
	} else {
		pins, err = s.Pins(ctx, tx, sn.ID, "")
	}
	if err != nil {
		return nil, nil, err
	}
	if err := Eligible(sn, change, pins, s.now(), s.TimeZone(ctx)); err != nil {
		return nil, nil, err
	}
	return b, sn, nil
}

// DeletingPins lists the operations other than except that delete snapshot
// id. A restore or a fork waits in the box's turn for a take or a restore
// that uses its snapshot, and is refused only while the snapshot is being
// deleted.
func (s *Records) DeletingPins(ctx context.Context, q db.DBTX, id, except string) ([]Pin, error) {
	pins, err := s.Pins(ctx, q, id, except)
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

// RunOperation runs one operation now, as its job would (tests call it).
func (s *Kernel) RunOperation(ctx context.Context, id string) error { return s.ops.Run(ctx, id) }

// Recover resumes every operation that a worker started or picked and no
// worker runs now (operations.Engine.Recover). serve and work call it at
// start; the reconcile calls it again, for workers that die while others
// live.
func (s *Kernel) Recover(ctx context.Context) (int, error) { return s.ops.Recover(ctx) }

// CheckNow re-observes an operation that could not be confirmed: it runs
// again from the step it reached, and settles as done, failed or unknown with
// what it found. One that still reads running is resumed when no live worker
// holds it or its job (a dead process's, as the periodic recover would), and
// otherwise left to the worker that has it.
func (s *Kernel) CheckNow(ctx context.Context, c Caller, id string) (*Operation, error) {
	op, err := s.Operation(ctx, c, id)
	if err != nil {
		return nil, err
	}
	if op.State == OpRunning {
		resumed, err := s.ops.RecoverOne(ctx, id)
		if err != nil || !resumed {
			return op, err
		}
		return s.ops.ByID(ctx, s.st.Pool, id)
	}
	if op.State != OpUnknown {
		return op, nil
	}
	if _, err := s.ops.Resume(ctx, op, true); err != nil {
		return nil, err
	}
	return s.ops.ByID(ctx, s.st.Pool, id)
}
