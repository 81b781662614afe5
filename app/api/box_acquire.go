package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/api/answers"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// acquireBox makes a box. An agent's box is always its own thread's; the
// person may put one in a thread, or keep it as a machine of theirs.
func (s boxRoutes) acquireBox(w http.ResponseWriter, r *http.Request) {
	var req snapshots.BoxRequest
	if err := decodeOptional(r, &req, "name, kind, backend, host, template, adopt, command, thread, hasScreen and screenUrl, all optional"); err != nil {
		s.fail(w, r, err)
		return
	}
	c := caller(r)
	if c.Kind == snapshots.CallerAgent && req.Thread != "" {
		s.fail(w, r, invalid("An agent's box is its own thread's: leave thread out."))
		return
	}
	b, err := s.boxes.AcquireBox(r.Context(), c, req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, answers.BoxView(c, b))
}
