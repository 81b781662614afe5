package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// deleteTemplate removes a box template; its boxes stay.
func (s *Server) deleteTemplate(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "name")
	if err := s.boxes.DeleteTemplate(r.Context(), snapshots.Owner(), name); err != nil {
		s.refused(w, r, err)
		return
	}
	s.done(w, r, "/settings/templates", snapshots.TemplateRemovedWords(name))
}
