package snapshots

import (
	"context"
	"errors"

	"github.com/boxsnap/boxsnap/app/store"
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
func (s *Kernel) Repeated(ctx context.Context, c Caller, requestID, kind, boxRef, snapRef string) (*Operation, error) {
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
func (s *Kernel) opOfBox(ctx context.Context, op *Operation, ref string) bool {
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
func (s *Kernel) opOfSnapshot(ctx context.Context, op *Operation, ref string) bool {
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
