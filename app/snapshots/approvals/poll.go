package approvals

import (
	"context"
	"errors"
	"fmt"
	"time"

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

// pollRecheck is how often Await reads a waiting request again: the
// person's answer is not notified to waits.
const pollRecheck = 250 * time.Millisecond

// Await reads a request as Asking does and, while it waits for the
// person's word, again until it is answered or ctx ends (the reads are not
// cut by ctx); an approved request names the restore it started.
func (s *Approvals) Await(ctx context.Context, c snapshots.Caller, id string) (*Approval, error) {
	for {
		a, err := s.Asking(context.WithoutCancel(ctx), c, id)
		if err != nil || a.State != ApprovalPending || ctx.Err() != nil {
			return a, err
		}
		t := time.NewTimer(pollRecheck)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
}
