package web

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// The event stream's bounds: a comment every eventsBeat keeps proxies and
// the write deadline from cutting a quiet stream, and a stream ends after
// eventsFor (the browser opens a new one at once, through sign-in again).
const (
	eventsBeat = 20 * time.Second
	eventsFor  = 10 * time.Minute
)

// showEvents streams server-sent events to an open page: "box" with a box's
// ID each time it changes, by anyone, in any process (an operation
// admitted or ended, a logged change, an edit). ?box= narrows the stream to
// those boxes; without it every box's changes come. The page's script
// draws its live parts again from one read. Every stream of the process
// shares the core's one LISTEN connection.
func (s *Server) showEvents(w http.ResponseWriter, r *http.Request) {
	want := map[string]bool{}
	for _, b := range r.URL.Query()["box"] {
		if !snapshots.ValidID(snapshots.PrefixBox, b) {
			http.Error(w, "A box's ID starts with its prefix and holds letters and digits only.", http.StatusBadRequest)
			return
		}
		want[b] = true
	}
	changes, stop, err := s.opts.Core.Follow(r.Context())
	if errors.Is(err, operations.ErrTooManyFollowers) {
		w.Header().Set("Retry-After", "30")
		http.Error(w, "Too many pages follow the boxes now; this one refreshes when you reload it.", http.StatusServiceUnavailable)
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	defer stop()
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	write := func(text string) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(WriteTimeout))
		if _, err := fmt.Fprint(w, text); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !write("retry: 1000\n\n") {
		return
	}
	beat := time.NewTicker(eventsBeat)
	defer beat.Stop()
	end := time.NewTimer(eventsFor)
	defer end.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-end.C:
			return
		case <-beat.C:
			if !write(": beat\n\n") {
				return
			}
		case box := <-changes:
			if len(want) > 0 && !want[box] {
				continue
			}
			if !write("event: box\ndata: " + box + "\n\n") {
				return
			}
		}
	}
}
