package web

import (
	"errors"
	"fmt"
	"math"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// The HTTP server's bounds (README, "Security model"). No response streams
// for long on boxsnap's own pages; a handler that does (a download, an API
// call that waits for its operation) moves its own write deadline with
// http.ResponseController, so WriteTimeout still bounds every other one.
const (
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = 30 * time.Second
	WriteTimeout      = 60 * time.Second
	IdleTimeout       = 2 * time.Minute
	// MaxFormBytes caps a form's body: boxsnap's largest form, a note of
	// 1 KB or the box templates' settings, is far below it.
	MaxFormBytes = 64 << 10
)

// NewHTTPServer is the HTTP server boxsnap serves h with, with its bounds.
func NewHTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: ReadHeaderTimeout, ReadTimeout: ReadTimeout,
		WriteTimeout: WriteTimeout, IdleTimeout: IdleTimeout}
}

// checkText reports whether s is text a request may carry: valid UTF-8
// with no NUL.
func checkText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// boundRequests checks every page request at the edge, before any handler
// runs: its path and query are text (valid UTF-8, no NUL), and a form's body
// is at most MaxFormBytes, parsed here once (on the request every handler
// sees, so that a multipart form's temporary files are removed when the
// request ends) and text too. The API (/api/v1) checks its own JSON bodies.
func boundRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !checkText(r.URL.Path) || !checkText(r.URL.RawQuery) || !checkQuery(r.URL.RawQuery) {
			http.Error(w, "The address holds something that is not text.", http.StatusBadRequest)
			return
		}
		// The Import page's upload is export files, streamed to the data
		// folder under its own cap (import.go), never parsed as a form.
		if strings.HasPrefix(r.URL.Path, "/api/") || strings.HasPrefix(r.URL.Path, "/jobs/") ||
			r.Method == http.MethodGet || r.Method == http.MethodHead || (r.Method == http.MethodPost && r.URL.Path == "/import") {
			next.ServeHTTP(w, r)
			return
		}
		ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if ct != "application/x-www-form-urlencoded" && ct != "multipart/form-data" {
			next.ServeHTTP(w, r)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxFormBytes)
		var err error
		if ct == "multipart/form-data" {
			// Within MaxFormBytes every part stays in memory; RemoveAll
			// removes anything written anyway.
			err = r.ParseMultipartForm(MaxFormBytes)
			if r.MultipartForm != nil {
				defer func() { _ = r.MultipartForm.RemoveAll() }()
			}
		} else {
			err = r.ParseForm()
		}
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			http.Error(w, fmt.Sprintf("The form is over %d KiB.", MaxFormBytes>>10), http.StatusRequestEntityTooLarge)
			return
		case err != nil:
			http.Error(w, "boxsnap could not read the form.", http.StatusBadRequest)
			return
		}
		for k, vs := range r.Form {
			ok := checkText(k)
			for _, v := range vs {
				ok = ok && checkText(v)
			}
			if !ok {
				http.Error(w, "Text in a form must be valid UTF-8, with no NUL character.", http.StatusBadRequest)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func checkQuery(raw string) bool {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return true // a handler reads what it can; nothing unparsed reaches the core
	}
	for k, vs := range q {
		if !checkText(k) {
			return false
		}
		for _, v := range vs {
			if !checkText(v) {
				return false
			}
		}
	}
	return true
}

// finite refuses NaN and the infinities: a number from a form that is one
// reads as a wrong number.
func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// The sign-in throttle's rules: FreeWrongPasswords wrong passwords from an
// address, then a wait that doubles with each further one, up to
// MaxSignInWait; one sign-in at a time per address. A right password from
// another address is never held up by them.
const (
	FreeWrongPasswords = 5
	MaxSignInWait      = 5 * time.Minute
	throttleForget     = 15 * time.Minute // an address quiet this long starts afresh
	throttleTracked    = 10000
	// maxSlowed bounds the throttled answers held back at once.
	maxSlowed = 64
)

// signInThrottle counts wrong passwords per client address (its IPv4
// address, or its IPv6 /64).
type signInThrottle struct {
	mu  sync.Mutex
	now func() time.Time
	by  map[netip.Prefix]*attempts
}

type attempts struct {
	wrong int
	until time.Time // no sign-in from the address before then
	busy  bool      // a sign-in from the address is being checked
	last  time.Time
}

func newSignInThrottle(now func() time.Time) *signInThrottle {
	if now == nil {
		now = time.Now
	}
	return &signInThrottle{now: now, by: map[netip.Prefix]*attempts{}}
}

// clientPrefix is the address a request came from (the connection's own: a
// forwarded-for header is not believed), as the throttle counts it.
func clientPrefix(r *http.Request) netip.Prefix {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Prefix{}
	}
	a = a.Unmap()
	bits := 32
	if a.Is6() {
		bits = 64
	}
	p, _ := a.Prefix(bits)
	return p
}

// begin admits one sign-in from p, or says how long to wait.
func (t *signInThrottle) begin(p netip.Prefix) (wait time.Duration, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if len(t.by) >= throttleTracked {
		for k, a := range t.by {
			if !a.busy && now.Sub(a.last) > throttleForget {
				delete(t.by, k)
			}
		}
		if len(t.by) >= throttleTracked {
			return time.Second, false
		}
	}
	a := t.by[p]
	if a == nil {
		a = &attempts{}
		t.by[p] = a
	}
	if now.Sub(a.last) > throttleForget && !a.busy {
		*a = attempts{}
	}
	a.last = now
	switch {
	case now.Before(a.until):
		return a.until.Sub(now), false
	case a.busy:
		return time.Second, false
	}
	a.busy = true
	return 0, true
}

// end records how a sign-in from p went: right forgets the address's wrong
// passwords.
func (t *signInThrottle) end(p netip.Prefix, right bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	a := t.by[p]
	if a == nil {
		return
	}
	a.busy = false
	if right {
		delete(t.by, p)
		return
	}
	a.wrong++
	if a.wrong >= FreeWrongPasswords {
		wait := MaxSignInWait
		if n := a.wrong - FreeWrongPasswords; n < 20 {
			wait = min(time.Second<<n, MaxSignInWait)
		}
		a.until = t.now().Add(wait)
	}
}

// tooManyWords is the one home of the throttle's words.
func tooManyWords(wait time.Duration) string {
	return fmt.Sprintf("Too many sign-ins from your address: try again in %s.", roundUp(wait))
}

func roundUp(d time.Duration) string {
	s := int(math.Ceil(d.Seconds()))
	if s < 1 {
		s = 1
	}
	if s == 1 {
		return "1 second"
	}
	if s < 120 {
		return fmt.Sprintf("%d seconds", s)
	}
	return fmt.Sprintf("%d minutes", (s+59)/60)
}

// retryAfter sets Retry-After in whole seconds.
func retryAfter(w http.ResponseWriter, wait time.Duration) {
	w.Header().Set("Retry-After", fmt.Sprint(max(1, int(math.Ceil(wait.Seconds())))))
}
