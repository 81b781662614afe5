package restore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// NewestUndoID is the ID of the box's newest undo, of a reset or a
// restore, whoever took it, or "" when the box has none: the snapshot
// UndoNewest restores to, so an undo's dry run checks the same restore,
// and a caller that may not see that undo is refused in the same words.
func (s *Resets) NewestUndoID(ctx context.Context, c snapshots.Caller, boxRef string) (string, error) {
	b, err := s.k.Box(ctx, c, boxRef)
	if err != nil {
		return "", err
	}
	id, err := s.st.ResetNewestUndo(ctx, s.st.Pool, b.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read %s's undos: %w", b.Name, err)
	}
	return id, nil
}
