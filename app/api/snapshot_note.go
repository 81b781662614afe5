package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/wire"
)

// noteSnapshot sets or clears (an empty note) a snapshot's note: the person
// only, at most 1 KB.
func (s snapshotChanges) noteSnapshot(w http.ResponseWriter, r *http.Request) {
	box, ref := param(r, "box"), param(r, "snapshot")
	var body wire.NoteBody
	if err := decode(r, &body, "note"); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := checkBoxAndSnapshot(box, ref); err != nil {
		s.fail(w, r, err)
		return
	}
	sn, err := s.keeps.SetNote(r.Context(), caller(r), box, ref, body.Note)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.Full(r.Context(), sn, s.core.TimeZone(r.Context())))
}
