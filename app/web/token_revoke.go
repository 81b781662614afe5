package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request) {
	if err := s.opts.Auth.RevokeAPIToken(r.Context(), chi.URLParam(r, "id")); err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/settings/tokens", http.StatusSeeOther)
}
