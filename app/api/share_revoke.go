package api

import (
	"net/http"
)

// revokeShare ends a share code now: the person only.
func (s snapshotMoves) revokeShare(w http.ResponseWriter, r *http.Request) {
	id := param(r, "share")
	if err := checkRef("share", id); err != nil {
		s.fail(w, r, err)
		return
	}
	sh, err := s.contents.RevokeShare(r.Context(), caller(r), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sh)
}
