package snapshots

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Picture is a snapshot's picture of the screen (section 10).
type Picture struct {
	JPEG   []byte
	Width  int
	Height int
}

// Picture returns a snapshot's picture through mayAct: the person, and the
// agent of the thread that owns it (never a kept one's). A snapshot with no
// picture, or one the caller may not see, reads as not found.
func (s *Service) Picture(ctx context.Context, c Caller, id string) (*Picture, error) {
	sn, b, err := s.Snapshot(ctx, c, id)
	if err != nil {
		return nil, err
	}
	if err := MayAct(c, ActPicture, b, sn); err != nil {
		return nil, err
	}
	var p Picture
	err = s.st.Pool.QueryRow(ctx, s.st.Q("CorePictureGet"), sn.ID).Scan(&p.JPEG, &p.Width, &p.Height)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, refuse(CodeNotFound, 404, "‘%s’ has no picture.", sn.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("read picture: %w", err)
	}
	return &p, nil
}
