package snapshots

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// repeated answers the operation a repeated request ID made, read before
// anything of the request is looked up: the first request may have changed
// what a lookup finds (a delete's snapshot is gone, a released box is no
// longer the caller's to see, a kept snapshot refuses a keep), and a repeat
// must answer the first one's operation all the same, not a 404 or a
// refusal. It answers nil, nil when the ID made no operation of kind, or
// one of another box or snapshot than boxRef and snapRef name (an ID or a
// name; "" matches any): the request then goes its usual way, and
// existingRequest refuses an ID used for something else.
func (s *Admission) Repeated(ctx context.Context, c Caller, requestID, kind, boxRef, snapRef string) (*Operation, error) {
	key := requestKey(c, requestID)
	if key == nil {
		return nil, nil
	}
	op, err := s.ops.ByRequest(ctx, s.st.Pool, *key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if op.Kind != kind || !MaySeeOperation(c, op) {
		return nil, nil
	}
	if boxRef != "" && !s.opOfBox(ctx, op, boxRef) {
		return nil, nil
	}
	if snapRef != "" && !s.opOfSnapshot(ctx, op, snapRef) {
		return nil, nil
	}
	return op, nil
}

// opOfBox says whether ref (an ID or a name) names op's box.
func (s *Admission) opOfBox(ctx context.Context, op *Operation, ref string) bool {
	if op.BoxID == nil {
		return false
	}
	if *op.BoxID == ref {
		return true
	}
	b, err := s.BoxByID(ctx, s.st.Pool, *op.BoxID)
	return err == nil && b.Name == ref
}

// opOfSnapshot says whether ref (an ID or a name) names op's snapshot: its
// ID, or its name now; when it is gone, a name that names none of the box's
// snapshots now: the request ID has named the operation already, and a name
// of nothing is no other request (a name that is another snapshot's is).
func (s *Admission) opOfSnapshot(ctx context.Context, op *Operation, ref string) bool {
	if op.Target == nil {
		return false
	}
	if *op.Target == ref {
		return true
	}
	if ValidID(PrefixSnapshot, ref) {
		return false
	}
	sn, err := s.SnapshotByID(ctx, s.st.Pool, *op.Target)
	if err == nil {
		return sn.Name == ref
	}
	if !errors.Is(err, store.ErrNotFound) || op.BoxID == nil {
		return false
	}
	all, err := s.SnapshotsOfBox(ctx, s.st.Pool, *op.BoxID)
	if err != nil {
		return false
	}
	for _, sn := range all {
		if sn.Name == ref {
			return false
		}
	}
	return true
}

// ToolAnswer is an agent tool's answer kept under the caller's retry key:
// the tool, digests of the arguments it was called with, and what it
// answered.
type ToolAnswer struct {
	Tool string
	// Args is a digest of the arguments as sent; Resolved, of the same with
	// the box and the snapshot named by their IDs ("" when they were not
	// found), so a retry naming them either way is the same call.
	Args     string
	Resolved string
	Status   int
	Body     []byte
}

// KeptToolAnswer is the tool answer kept under c's retry key requestID, or
// nil when none is.
func (s *Admission) KeptToolAnswer(ctx context.Context, c Caller, requestID string) (*ToolAnswer, error) {
	key := requestKey(c, requestID)
	if key == nil {
		return nil, nil
	}
	row, err := s.st.ToolAnswerByKey(ctx, s.st.Pool, *key)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the tool answer of a retry key: %w", err)
	}
	return &ToolAnswer{Tool: row.Tool, Args: row.Args, Resolved: row.Resolved, Status: row.Status, Body: row.Body}, nil
}

// KeepToolAnswer keeps a tool's answer under c's retry key requestID, in
// PostgreSQL so a retry after a restart finds it; when two calls with one
// key end at once, the first kept is the answer.
func (s *Admission) KeepToolAnswer(ctx context.Context, c Caller, requestID string, a ToolAnswer) error {
	key := requestKey(c, requestID)
	if key == nil {
		return nil
	}
	err := s.st.ToolAnswerKeep(ctx, s.st.Pool, db.ToolAnswerKeepParams{Key: *key, Tool: a.Tool, Args: a.Args,
		Resolved: a.Resolved, Status: a.Status, Body: a.Body})
	if err != nil {
		return fmt.Errorf("keep a tool answer under its retry key: %w", err)
	}
	return nil
}
