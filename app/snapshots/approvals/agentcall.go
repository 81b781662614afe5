package approvals

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// AgentCall is what an agent's call needs to know before its tool runs,
// read in one statement (TakeAgentCall): its thread, whether the thread's
// turns are held (TurnHeld's words, or ""), and whether News has anything
// to tell it.
type AgentCall struct {
	Thread string
	Held   string
	News   bool
}

// AgentCall reads the live thread a bearer token belongs to, with what
// TurnHeld and News would find: snapshots.ErrNoThread when the token
// names no live thread. Every call of an agent asks, so the three are one read.
func (s *Approvals) AgentCall(ctx context.Context, token string) (*AgentCall, error) {
	if !strings.HasPrefix(token, snapshots.ThreadTokenPrefix) {
		return nil, snapshots.ErrNoThread
	}
	h := sha256.Sum256([]byte(token))
	r, err := s.st.TakeAgentCall(ctx, s.st.Pool, db.TakeAgentCallParams{Now: s.now(), TokenHash: h[:]})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, snapshots.ErrNoThread
	}
	if err != nil {
		return nil, fmt.Errorf("read thread: %w", err)
	}
	a := &AgentCall{Thread: r.ID, News: r.News}
	if r.HeldBox != "" {
		a.Held = HeldWords(r.HeldBox)
	}
	return a, nil
}
