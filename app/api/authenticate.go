package api

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/boxsnap/boxsnap/app/auth"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
)

type callerKey struct{}

// agentCallKey holds an agent's approvals.AgentCall, read with its token.
type agentCallKey struct{}

// authenticate finds the caller from the bearer token: a personal API token
// is the owner through the CLI (the box log says "by a boxsnap command"); a
// thread's token is that thread's agent. The thread never comes from a
// parameter. No token, or one that names nothing live, is 401, and the
// token is never echoed or logged.
func (s *server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Get("Authorization")
		token, ok := strings.CutPrefix(h, "Bearer ")
		token = strings.TrimSpace(token)
		if !ok || token == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="boxsnap"`)
			writeError(w, codeUnauthorized,
				"Send Authorization: Bearer and a token: a personal API token (bxt_…) or a thread's token (bxa_…).", false)
			return
		}
		c, call, err := s.callerOf(r.Context(), token)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if c == nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="boxsnap", error="invalid_token"`)
			writeError(w, codeUnauthorized,
				"That token is not valid: it may have been revoked, or its thread has ended.", false)
			return
		}
		ctx := context.WithValue(r.Context(), callerKey{}, *c)
		if call != nil {
			ctx = context.WithValue(ctx, agentCallKey{}, call)
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// callerOf returns the caller a token names, nil when it names nothing.
// For a thread's token it also answers what the agent's call needs before
// its tool runs (toolGate), read with the thread in one statement.
func (s *server) callerOf(ctx context.Context, token string) (*snapshots.Caller, *approvals.AgentCall, error) {
	switch {
	case strings.HasPrefix(token, auth.APITokenPrefix):
		ok, err := s.auth.CheckOwnerToken(ctx, token)
		if err != nil || !ok {
			return nil, nil, err
		}
		c := snapshots.CLI()
		return &c, nil, nil
	case strings.HasPrefix(token, snapshots.ThreadTokenPrefix):
		call, err := s.approvals.AgentCall(ctx, token)
		if errors.Is(err, snapshots.ErrNoThread) {
			return nil, nil, nil
		}
		if err != nil {
			return nil, nil, err
		}
		c := snapshots.Agent(call.Thread)
		return &c, call, nil
	}
	return nil, nil, nil
}

// caller is the request's caller; authenticate always sets it.
func caller(r *http.Request) snapshots.Caller {
	c, _ := r.Context().Value(callerKey{}).(snapshots.Caller)
	return c
}
