package api

import (
	"net/http"
)

// snapshotLineage answers what a snapshot was taken from, and so on back,
// as the caller may see it.
func (s *server) snapshotLineage(w http.ResponseWriter, r *http.Request) {
	box, ref := param(r, "box"), param(r, "snapshot")
	if err := checkBoxAndSnapshot(box, ref); err != nil {
		s.fail(w, r, err)
		return
	}
	c := caller(r)
	sn, _, err := s.core.SnapshotOfBox(r.Context(), c, box, ref)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	l, err := s.core.SnapshotLineage(r.Context(), c, sn.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, l)
}
