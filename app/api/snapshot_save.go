package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/wire"
)

// saveSnapshot makes an automatic snapshot an ordinary one.
func (s snapshotChanges) saveSnapshot(w http.ResponseWriter, r *http.Request) {
	box, ref := param(r, "box"), param(r, "snapshot")
	var body wire.SaveBody
	if err := decodeOptional(r, &body, "name, optional"); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := checkBoxAndSnapshot(box, ref); err != nil {
		s.fail(w, r, err)
		return
	}
	sn, err := s.keeps.Save(r.Context(), caller(r), box, ref, body.Name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.Full(r.Context(), sn, s.core.TimeZone(r.Context())))
}
