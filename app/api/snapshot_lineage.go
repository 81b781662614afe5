package api

import "net/http"

// snapshotLineage answers what a snapshot was taken from, and so on back,
// as the caller may see it.
func (s snapshotReads) snapshotLineage(w http.ResponseWriter, r *http.Request) {
	l, err := s.LineageOf(r.Context(), caller(r), param(r, "box"), param(r, "snapshot"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, l)
}
