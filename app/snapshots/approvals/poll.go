package approvals

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// Asking reads a request as the one who may poll it sees it: the person
// any, an agent its own thread's only; another thread's request reads as a
// made-up ID does. A request past its time expires as it is read, and an
// approved one says how its restore ended (Get's reading).
func (s *Approvals) Asking(ctx context.Context, c snapshots.Caller, id string) (*Approval, error) {
	if c.IsPerson() {
		return s.Get(ctx, c, id)
	}
	r, err := s.st.PersonApprovalGet(ctx, s.st.Pool, id)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && (c.Kind != snapshots.CallerAgent || r.ThreadID != c.Thread) {
		return nil, refusal(snapshots.CodeNotFound, noRequestWords(id))
	}
	if err != nil {
		return nil, fmt.Errorf("read request %s: %w", id, err)
	}
	return s.approvalOf(ctx, r), nil
}
