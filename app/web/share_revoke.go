package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// revokeShare ends a share code from the Import page.
func (s *Server) revokeShare(w http.ResponseWriter, r *http.Request) {
	if _, err := s.opts.Core.Contents().RevokeShare(r.Context(), snapshots.Owner(), chi.URLParam(r, "id")); err != nil {
		s.importResult(w, r, nil, err)
		return
	}
	s.done(w, r, "/import", snapshots.RevokedWords(""))
}
