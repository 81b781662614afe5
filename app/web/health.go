package web

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// healthFor is how long /healthz answers one ping's result: under load it
// pings the database at most about once a second, whoever asks.
const healthFor = time.Second

// databasePingTimeout bounds a health check's ping of the database.
const databasePingTimeout = 2 * time.Second

// quoted is a name in quotes in the server's words.
var quoted = regexp.MustCompile(`"[^"]*"`)

// databaseDown pings the database with ping, within databasePingTimeout,
// and answers "" when it answers, else why not in words that hold no
// secret: never the connection string, its host, user or database (pgx's
// connect errors name them), only the server's own message or the
// system's.
func databaseDown(ctx context.Context, ping func(context.Context) error) string {
	ctx, cancel := context.WithTimeout(ctx, databasePingTimeout)
	defer cancel()
	err := ping(ctx)
	if err == nil {
		return ""
	}
	var pgErr *pgconn.PgError
	var errno syscall.Errno
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		return DatabaseDownWords(noAnswerWithinWords(databasePingTimeout))
	case errors.As(err, &pgErr):
		// The server's words name what they are about in quotes (the
		// database, the user): left out.
		return DatabaseDownWords(strings.Join(strings.Fields(quoted.ReplaceAllString(pgErr.Message, "")), " "))
	case errors.As(err, &errno):
		return DatabaseDownWords(errno.Error())
	}
	return DatabaseDownWords(itsConnectionFailedWords)
}

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
