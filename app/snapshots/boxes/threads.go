package boxes

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/jackc/pgx/v5"
)

// CreateThread registers a thread with its title; its bearer token is
// returned once and kept only as a hash. Only the person makes threads.
func (s *ThreadKeeper) CreateThread(ctx context.Context, c snapshots.Caller, title string) (*snapshots.Thread, string, error) {
	if !c.IsPerson() {
		return nil, "", &snapshots.Refusal{Code: snapshots.CodeForbidden, Words: onlyPersonMakesThreadWords}
	}
	title = strings.TrimSpace(title)
	if title == "" || utf8.RuneCountInString(title) > snapshots.MaxThreadTitle {
		return nil, "", &snapshots.Refusal{Code: snapshots.CodeInvalid, Words: threadTitleWords(snapshots.MaxThreadTitle)}
	}
	if err := snapshots.CheckLine("A thread's title", title); err != nil {
		return nil, "", err
	}
	id := snapshots.NewID(snapshots.PrefixThread)
	token := snapshots.ThreadTokenPrefix + snapshots.NewID("") + snapshots.NewID("") + snapshots.NewID("")
	h := sha256.Sum256([]byte(token))
	r, err := s.st.CoreThreadInsert(ctx, s.st.Pool, db.CoreThreadInsertParams{ID: id, Title: title, TokenHash: h[:]})
	if err != nil {
		return nil, "", fmt.Errorf("make thread: %w", err)
	}
	t := snapshots.Thread(r)
	return &t, token, nil
}

// ThreadByToken finds the live thread a bearer token belongs to.
func (s *ThreadKeeper) ThreadByToken(ctx context.Context, token string) (*snapshots.Thread, error) {
	if !strings.HasPrefix(token, snapshots.ThreadTokenPrefix) {
		return nil, snapshots.ErrNoThread
	}
	h := sha256.Sum256([]byte(token))
	r, err := s.st.CoreThreadByHash(ctx, s.st.Pool, h[:])
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, snapshots.ErrNoThread
	}
	if err != nil {
		return nil, fmt.Errorf("read thread: %w", err)
	}
	t := snapshots.Thread(r)
	return &t, nil
}

// Thread reads one thread; an agent reads only its own.
func (s *ThreadKeeper) Thread(ctx context.Context, c snapshots.Caller, id string) (*snapshots.Thread, error) {
	if c.Kind == snapshots.CallerAgent && c.Thread != id {
		return nil, &snapshots.Refusal{Code: snapshots.CodeNotFound, Words: snapshots.NoThreadWords(id)}
	}
	return s.k.Thread(ctx, id)
}

// Threads lists every thread, for the person.
func (s *ThreadKeeper) Threads(ctx context.Context, c snapshots.Caller) ([]*snapshots.Thread, error) {
	if !c.IsPerson() {
		t, err := s.k.Thread(ctx, c.Thread)
		if err != nil {
			return nil, err
		}
		return []*snapshots.Thread{t}, nil
	}
	rows, err := s.st.CoreThreads(ctx, s.st.Reader(ctx))
	if err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	out := make([]*snapshots.Thread, len(rows))
	for i := range rows {
		t := snapshots.Thread(rows[i])
		out[i] = &t
	}
	return out, nil
}

// ThreadTitles answers the titles of the threads ids names, by ID, for the
// rows of a page: the person's pages read the threads their rows name, never
// every thread of the install. An agent learns only its own thread's.
func (s *ThreadKeeper) ThreadTitles(ctx context.Context, c snapshots.Caller, ids []string) (map[string]string, error) {
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
