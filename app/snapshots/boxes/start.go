package boxes

import (
	"context"
	"errors"
	"fmt"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// StartBox starts a stopped box's guest, as the person asks from its card:
// a live box whose guest exists, with no operation of boxsnap's running on
// it. It refuses in words otherwise and changes nothing.
func (s *Boxes) StartBox(ctx context.Context, c snapshots.Caller, ref string) (*snapshots.Box, error) {
	if !c.IsPerson() {
		return nil, &snapshots.Refusal{Code: snapshots.CodeForbidden, Words: onlyPersonStartsWords}
	}
	b, err := s.k.Box(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	if b.ReleasedAt != nil || b.State != "ready" {
		return nil, &snapshots.Refusal{Code: snapshots.CodeConflict, Words: startReleasedWords(b.Name)}
	}
	if op, err := s.k.RunningOn(ctx, b); err == nil && op != nil {
		return nil, &snapshots.Refusal{Code: snapshots.CodeConflict, Words: startBusyWords(b.Name)}
	}
	be, ok := s.k.BackendOf(b)
	if !ok || be.Boxes == nil {
		return nil, errors.New("its backend is not configured here")
	}
	st, err := be.Boxes.Status(ctx, snapshots.GuestOf(b))
	if err != nil {
		return nil, fmt.Errorf("read %s's state: %w", b.Name, err)
	}
	if st.Running {
		return nil, &snapshots.Refusal{Code: snapshots.CodeConflict, Words: runningAlreadyWords(b.Name)}
	}
	if err := be.Boxes.Start(ctx, snapshots.GuestOf(b)); err != nil {
		return nil, backendRefusal(fmt.Errorf("start %s: %w", b.Name, err), "boxsnap could not start it: ")
	}
	if st, err := be.Boxes.Status(ctx, snapshots.GuestOf(b)); err == nil && !st.Running {
		return nil, &snapshots.Refusal{Code: snapshots.CodeConflict, Words: nothingToRunWords(b.Name)}
	}
	s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvStarted, c, "", "", "", nil)
	return b, nil
}
