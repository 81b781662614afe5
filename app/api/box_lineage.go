package api

import "net/http"

// boxLineage answers a box's head, the snapshot its state descends from,
// and the head's lineage.
func (s boxRoutes) boxLineage(w http.ResponseWriter, r *http.Request) {
	l, err := s.LineageOf(r.Context(), caller(r), param(r, "box"), "")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, l)
}
