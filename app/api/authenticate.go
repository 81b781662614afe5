package api

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/boxsnap/boxsnap/app/auth"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

type callerKey struct{}

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
		c, err := s.callerOf(r.Context(), token)
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
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, *c)))
	})
}

// callerOf returns the caller a token names, nil when it names nothing.
func (s *server) callerOf(ctx context.Context, token string) (*snapshots.Caller, error) {
	switch {
	case strings.HasPrefix(token, auth.APITokenPrefix):
		ok, err := s.auth.CheckOwnerToken(ctx, token)
		if err != nil || !ok {
			return nil, err
		}
		c := snapshots.CLI()
		return &c, nil
	case strings.HasPrefix(token, snapshots.ThreadTokenPrefix):
		th, err := s.core.Boxes().ThreadByToken(ctx, token)
		if errors.Is(err, snapshots.ErrNoThread) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		c := snapshots.Agent(th.ID)
		return &c, nil
	}
	return nil, nil
}

// caller is the request's caller; authenticate always sets it.
func caller(r *http.Request) snapshots.Caller {
	c, _ := r.Context().Value(callerKey{}).(snapshots.Caller)
	return c
}
