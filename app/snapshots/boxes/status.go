package boxes

import (
	"context"
	"errors"
	"fmt"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// BoxStatus reads whether a box's guest exists and runs, and its size
// where its backend says, as the caller may see the box: what a box's
// page shows beside its snapshots.
func (s *Boxes) BoxStatus(ctx context.Context, c snapshots.Caller, ref string) (providers.GuestStatus, error) {
	b, err := s.k.Box(ctx, c, ref)
	if err != nil {
		return providers.GuestStatus{}, err
	}
	be, ok := s.k.BackendOf(b)
	if !ok || be.Boxes == nil {
		return providers.GuestStatus{}, errors.New("its backend is not configured here")
	}
	st, err := be.Boxes.Status(ctx, snapshots.GuestOf(b))
	if err != nil {
		return providers.GuestStatus{}, fmt.Errorf("read %s's state: %w", b.Name, err)
	}
	return st, nil
}

// StoppedWords say why the box's backend stopped it by itself (it reached
// its disk bound, DiskStopWords), or "" when it did not, or its status
// cannot be read: a released box has none.
func (s *Boxes) StoppedWords(ctx context.Context, c snapshots.Caller, b *snapshots.Box) string {
	if b.ReleasedAt != nil || b.State == snapshots.BoxReleased {
		return ""
	}
	st, err := s.BoxStatus(ctx, c, b.ID)
	if err != nil {
		return ""
	}
	return snapshots.DiskStopWords(b.Name, st.DiskStop)
}
