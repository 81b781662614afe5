package web

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// healthFor is how long /healthz answers one ping's result: under load it
// pings the database at most about once a second, whoever asks.
const healthFor = time.Second

// healthCheck is /healthz's look at the database: one ping at a time, its
// result kept healthFor; a request while a ping runs answers the last
// result at once rather than wait for it, so nothing a client does (slow
// or many) makes /healthz wait on another.
type healthCheck struct {
	down func(context.Context) string // "" when the database answers

	mu      sync.Mutex
	at      time.Time // when the last ping ended; zero: none yet
	why     string    // its result
	pinging chan struct{}
}

// result answers the database's state: the last ping's while it is fresh
// or another ping runs (the very first request waits for the first ping).
func (h *healthCheck) result() string {
	h.mu.Lock()
	if time.Since(h.at) < healthFor {
		why := h.why
		h.mu.Unlock()
		return why
	}
	if h.pinging != nil {
		wait, first := h.pinging, h.at.IsZero()
		why := h.why
		h.mu.Unlock()
		if !first {
			return why
		}
		<-wait
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.why
	}
	done := make(chan struct{})
	h.pinging = done
	h.mu.Unlock()
	// Not the request's context: a client that goes away must not make
	// the ping's result a failure for everyone else.
	why := h.down(context.Background())
	h.mu.Lock()
	h.at, h.why, h.pinging = time.Now(), why, nil
	h.mu.Unlock()
	close(done)
	return why
}

// health is /healthz: 200 "ok" while the database answers, else 503 with
// why.
func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	why := ""
	if s.healthz != nil {
		why = s.healthz.result()
	}
	if why != "" {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(why + "\n"))
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}
