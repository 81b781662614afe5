package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/wire"
)

// renameSnapshot renames a snapshot: the person only.
func (s snapshotChanges) renameSnapshot(w http.ResponseWriter, r *http.Request) {
	box, ref := param(r, "box"), param(r, "snapshot")
	var body wire.RenameBody
	if err := decode(r, &body, "name"); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := checkBoxAndSnapshot(box, ref); err != nil {
		s.fail(w, r, err)
		return
	}
	sn, err := s.keeps.Rename(r.Context(), caller(r), box, ref, body.Name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.Full(r.Context(), sn, s.core.TimeZone(r.Context())))
}
