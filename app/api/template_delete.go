package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// deleteTemplate removes a box template (the person); its boxes stay.
func (s settingsRoutes) deleteTemplate(w http.ResponseWriter, r *http.Request) {
	if err := s.boxes.DeleteTemplate(r.Context(), caller(r), chi.URLParam(r, "template")); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
