package api

import "net/http"

// boxLineage answers a box's head, the snapshot its state descends from,
// and the head's lineage.
func (s *server) boxLineage(w http.ResponseWriter, r *http.Request) {
	box := param(r, "box")
	if err := checkRef("box", box); err != nil {
		s.fail(w, r, err)
		return
	}
	l, err := s.core.BoxLineage(r.Context(), caller(r), box)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, l)
}
