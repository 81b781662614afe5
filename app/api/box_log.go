package api

import (
	"net/http"
	"strconv"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/wire"
)

// DefaultLogLimit is how many box log events an answer holds unless
// ?limit= says otherwise, up to the log's own bound.
const DefaultLogLimit = 200

// boxLog answers a box's log, newest first, as the caller may see it.
func (s boxRoutes) boxLog(w http.ResponseWriter, r *http.Request) {
	ref := param(r, "box")
	limit := DefaultLogLimit
	if l := r.URL.Query().Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > snapshots.BoxLogKeep {
			s.fail(w, r, invalid("limit is 1 to %d.", snapshots.BoxLogKeep))
			return
		}
		limit = n
	}
	if err := checkRef("box", ref); err != nil {
		s.fail(w, r, err)
		return
	}
	events, err := s.boxes.BoxLog(r.Context(), caller(r), ref, limit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if events == nil {
		events = []snapshots.LogEvent{}
	}
	writeJSON(w, http.StatusOK, wire.LogAnswer{Box: ref, Events: events})
}
