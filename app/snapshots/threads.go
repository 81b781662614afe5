package snapshots

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/store"
)

// ThreadTokenPrefix starts every thread's bearer token.
const ThreadTokenPrefix = "bxa_"

// MaxThreadTitle bounds a thread's title.
const MaxThreadTitle = 120

// ErrNoThread is returned for a token that names no live thread.
var ErrNoThread = fmt.Errorf("thread: %w", store.ErrNotFound)

func (s *Records) Thread(ctx context.Context, id string) (*Thread, error) {
	r, err := s.st.CoreThreadByID(ctx, s.st.Reader(ctx), id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, refusal(CodeNotFound, NoThreadWords(id))
	}
	if err != nil {
		return nil, fmt.Errorf("read thread: %w", err)
	}
	t := Thread(r)
	return &t, nil
}

// ThreadTitle is a thread's title for words, or "" when unknown.
func (s *Records) ThreadTitle(ctx context.Context, id *string) string {
	if id == nil {
		return ""
	}
	t, err := s.Thread(ctx, *id)
	if err != nil {
		return ""
	}
	return t.Title
}
