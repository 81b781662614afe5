package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/wire"
)

// createThread registers a thread for the owner and answers its agent's
// token once.
func (s *server) createThread(w http.ResponseWriter, r *http.Request) {
	var body wire.ThreadBody
	if err := decode(r, &body, "title"); err != nil {
		s.fail(w, r, err)
		return
	}
	th, token, err := s.Boxes.CreateThread(r.Context(), caller(r), body.Title)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, wire.ThreadAnswer{Thread: th, Token: token,
		Message: "This is the thread's token for its agent. boxsnap shows it once: keep it now."})
}
