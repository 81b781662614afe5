package snapshots

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// ThreadTokenPrefix starts every thread's bearer token.
const ThreadTokenPrefix = "bxa_"

// MaxThreadTitle bounds a thread's title.
const MaxThreadTitle = 120

// CreateThread registers a thread with its title; its bearer token is
// returned once and kept only as a hash. Only the person makes threads.
func (s *Boxes) CreateThread(ctx context.Context, c Caller, title string) (*Thread, string, error) {
	if !c.IsPerson() {
		return nil, "", refusal(CodeForbidden, wordsOnlyPersonMakesThread)
	}
	title = strings.TrimSpace(title)
	if title == "" || utf8.RuneCountInString(title) > MaxThreadTitle {
		return nil, "", refusal(CodeInvalid, wordsThreadTitle(MaxThreadTitle))
	}
	if err := CheckLine("A thread's title", title); err != nil {
		return nil, "", err
	}
	id := NewID(PrefixThread)
	token := ThreadTokenPrefix + NewID("") + NewID("") + NewID("")
	h := sha256.Sum256([]byte(token))
	r, err := s.st.CoreThreadInsert(ctx, s.st.Pool, db.CoreThreadInsertParams{ID: id, Title: title, TokenHash: h[:]})
	if err != nil {
		return nil, "", fmt.Errorf("make thread: %w", err)
	}
	t := Thread(r)
	return &t, token, nil
}

// ThreadByToken finds the live thread a bearer token belongs to.
func (s *Boxes) ThreadByToken(ctx context.Context, token string) (*Thread, error) {
	if !strings.HasPrefix(token, ThreadTokenPrefix) {
		return nil, ErrNoThread
	}
	h := sha256.Sum256([]byte(token))
	r, err := s.st.CoreThreadByHash(ctx, s.st.Pool, h[:])
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNoThread
	}
	if err != nil {
		return nil, fmt.Errorf("read thread: %w", err)
	}
	t := Thread(r)
	return &t, nil
}

// ErrNoThread is returned for a token that names no live thread.
var ErrNoThread = fmt.Errorf("thread: %w", store.ErrNotFound)

func (s *Kernel) thread(ctx context.Context, id string) (*Thread, error) {
	r, err := s.st.CoreThreadByID(ctx, s.st.Reader(ctx), id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, refusal(CodeNotFound, wordsNoThread(id))
	}
	if err != nil {
		return nil, fmt.Errorf("read thread: %w", err)
	}
	t := Thread(r)
	return &t, nil
}

// Thread reads one thread; an agent reads only its own.
func (s *Boxes) Thread(ctx context.Context, c Caller, id string) (*Thread, error) {
	if c.Kind == CallerAgent && c.Thread != id {
		return nil, refusal(CodeNotFound, wordsNoThread(id))
	}
	return s.thread(ctx, id)
}

// Threads lists every thread, for the person.
func (s *Boxes) Threads(ctx context.Context, c Caller) ([]*Thread, error) {
	if !c.IsPerson() {
		t, err := s.thread(ctx, c.Thread)
		if err != nil {
			return nil, err
		}
		return []*Thread{t}, nil
	}
	rows, err := s.st.CoreThreads(ctx, s.st.Reader(ctx))
	if err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	out := make([]*Thread, len(rows))
	for i := range rows {
		t := Thread(rows[i])
		out[i] = &t
	}
	return out, nil
}

// ThreadTitles answers the titles of the threads ids names, by ID, for the
// rows of a page: the person's pages read the threads their rows name, never
// every thread of the install. An agent learns only its own thread's.
func (s *Boxes) ThreadTitles(ctx context.Context, c Caller, ids []string) (map[string]string, error) {
	if !c.IsPerson() {
		ids = slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return id != c.Thread })
	}
	out := make(map[string]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.st.ThreadTitles(ctx, s.st.Reader(ctx), ids)
	if err != nil {
		return nil, fmt.Errorf("read the titles of %d threads: %w", len(ids), err)
	}
	for _, r := range rows {
		out[r.ID] = r.Title
	}
	return out, nil
}

// ThreadTitle is a thread's title for words, or "" when unknown.
func (s *Kernel) ThreadTitle(ctx context.Context, id *string) string {
	if id == nil {
		return ""
	}
	t, err := s.thread(ctx, *id)
	if err != nil {
		return ""
	}
	return t.Title
}
