package snapshots

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// ThreadTokenPrefix starts every thread's bearer token.
const ThreadTokenPrefix = "bxa_"

// MaxThreadTitle bounds a thread's title.
const MaxThreadTitle = 120

// CreateThread registers a thread with its title; its bearer token is
// returned once and kept only as a hash. Only the person makes threads.
func (s *Service) CreateThread(ctx context.Context, c Caller, title string) (*Thread, string, error) {
	if !c.IsPerson() {
		return nil, "", refuse(CodeForbidden, "Only the person makes threads.")
	}
	title = strings.TrimSpace(title)
	if title == "" || utf8.RuneCountInString(title) > MaxThreadTitle {
		return nil, "", invalid("A thread's title is 1 to %d characters.", MaxThreadTitle)
	}
	if err := CheckLine("A thread's title", title); err != nil {
		return nil, "", err
	}
	id := NewID(PrefixThread)
	token := ThreadTokenPrefix + NewID("") + NewID("") + NewID("")
	h := sha256.Sum256([]byte(token))
	rows, err := s.st.Pool.Query(ctx, s.st.Q("CoreThreadInsert"), id, title, h[:])
	if err != nil {
		return nil, "", fmt.Errorf("make thread: %w", err)
	}
	t, err := pgx.CollectExactlyOneRow(rows, pgx.RowToAddrOfStructByName[Thread])
	if err != nil {
		return nil, "", fmt.Errorf("make thread: %w", err)
	}
	return t, token, nil
}

// ThreadByToken finds the live thread a bearer token belongs to.
func (s *Service) ThreadByToken(ctx context.Context, token string) (*Thread, error) {
	if !strings.HasPrefix(token, ThreadTokenPrefix) {
		return nil, errNoRow
	}
	h := sha256.Sum256([]byte(token))
	rows, err := s.st.Pool.Query(ctx, s.st.Q("CoreThreadByHash"), h[:])
	if err != nil {
		return nil, fmt.Errorf("read thread: %w", err)
	}
	t, err := pgx.CollectExactlyOneRow(rows, pgx.RowToAddrOfStructByName[Thread])
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errNoRow
	}
	return t, err
}

// ErrNoThread is returned for a token that names no live thread.
var ErrNoThread = errNoRow

func (s *Service) thread(ctx context.Context, id string) (*Thread, error) {
	rows, err := s.st.Pool.Query(ctx, s.st.Q("CoreThreadByID"), id)
	if err != nil {
		return nil, fmt.Errorf("read thread: %w", err)
	}
	t, err := pgx.CollectExactlyOneRow(rows, pgx.RowToAddrOfStructByName[Thread])
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, refuse(CodeNotFound, "No thread %s.", id)
	}
	return t, err
}

// Thread reads one thread; an agent reads only its own.
func (s *Service) Thread(ctx context.Context, c Caller, id string) (*Thread, error) {
	if c.Kind == CallerAgent && c.Thread != id {
		return nil, refuse(CodeNotFound, "No thread %s.", id)
	}
	return s.thread(ctx, id)
}

// Threads lists every thread, for the person.
func (s *Service) Threads(ctx context.Context, c Caller) ([]*Thread, error) {
	if !c.IsPerson() {
		t, err := s.thread(ctx, c.Thread)
		if err != nil {
			return nil, err
		}
		return []*Thread{t}, nil
	}
	rows, err := s.st.Pool.Query(ctx, s.st.Q("CoreThreads"))
	if err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowToAddrOfStructByName[Thread])
}

// threadTitle is a thread's title for words, or "" when unknown.
func (s *Service) threadTitle(ctx context.Context, id *string) string {
	if id == nil {
		return ""
	}
	t, err := s.thread(ctx, *id)
	if err != nil {
		return ""
	}
	return t.Title
}
