package api

import (
	"net/http"
)

// unsaveSnapshot makes a saved snapshot automatic again.
func (s snapshotChanges) unsaveSnapshot(w http.ResponseWriter, r *http.Request) {
	box, ref := param(r, "box"), param(r, "snapshot")
	if err := checkBoxAndSnapshot(box, ref); err != nil {
		s.fail(w, r, err)
		return
	}
	sn, err := s.keeps.Unsave(r.Context(), caller(r), box, ref)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.Full(r.Context(), sn, s.core.TimeZone(r.Context())))
}
