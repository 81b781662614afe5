package api

import "net/http"

// listBoxes lists the boxes the caller may see.
func (s boxRoutes) listBoxes(w http.ResponseWriter, r *http.Request) {
	ans, err := s.BoxesOf(r.Context(), caller(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ans)
}
