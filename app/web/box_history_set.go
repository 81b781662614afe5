package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// setBoxHistory turns a box's automatic snapshots on or off (the
// timeline's toggle).
func (s *Server) setBoxHistory(w http.ResponseWriter, r *http.Request) {
	box := chi.URLParam(r, "box")
	var on *bool
	switch r.PostFormValue("automatic") {
	case "on":
		v := true
		on = &v
	case "off":
		v := false
		on = &v
	case "backend":
	default:
		s.refused(w, r, &snapshots.Refusal{Code: snapshots.CodeInvalid, Words: "Automatic snapshots are on, off, or as the backend's setting says (backend)."})
		return
	}
	cur, err := s.boxes.BoxHistorySettings(r.Context(), snapshots.Owner(), box)
	if err != nil {
		s.refused(w, r, err)
		return
	}
	if _, err := s.boxes.SetBoxHistory(r.Context(), snapshots.Owner(), box, on, cur.MaxGiB); err != nil {
		s.refused(w, r, err)
		return
	}
	words := "Automatic snapshots are off for " + box + "."
	if on == nil || *on {
		words = "Automatic snapshots are on for " + box + "."
	}
	s.done(w, r, backOf(r, box), words)
}
