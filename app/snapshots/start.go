package snapshots

import (
	"context"
	"errors"
	"fmt"
)

// EvStarted is the box log's event for a box the person started.
const EvStarted = "started"

// StartBox starts a stopped box's guest, as the person asks from its card:
// a live box whose guest exists, with no operation of boxsnap's running on
// it. It refuses in words otherwise and changes nothing.
func (s *Boxes) StartBox(ctx context.Context, c Caller, ref string) (*Box, error) {
	if !c.IsPerson() {
		return nil, refusal(CodeForbidden, wordsOnlyPersonStarts)
	}
	b, err := s.Box(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	if b.ReleasedAt != nil || b.State != "ready" {
		return nil, refusal(CodeConflict, wordsStartReleased(b.Name))
	}
	if op, err := s.RunningOn(ctx, b); err == nil && op != nil {
		return nil, refusal(CodeConflict, wordsStartBusy(b.Name))
	}
	be, ok := s.BackendOf(b)
	if !ok || be.Boxes == nil {
		return nil, errors.New("its backend is not configured here")
	}
	st, err := be.Boxes.Status(ctx, GuestOf(b))
	if err != nil {
		return nil, fmt.Errorf("read %s's state: %w", b.Name, err)
	}
	if st.Running {
		return nil, refusal(CodeConflict, wordsRunningAlready(b.Name))
	}
	if err := be.Boxes.Start(ctx, GuestOf(b)); err != nil {
		return nil, backendRefusal(fmt.Errorf("start %s: %w", b.Name, err), "boxsnap could not start it: ")
	}
	if st, err := be.Boxes.Status(ctx, GuestOf(b)); err == nil && !st.Running {
		return nil, refusal(CodeConflict, wordsNothingToRun(b.Name))
	}
	s.Log(ctx, s.st.Pool, b.ID, EvStarted, c, "", "", "", nil)
	return b, nil
}
