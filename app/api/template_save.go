package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// saveTemplate adds or replaces a box template (the person).
func (s settingsRoutes) saveTemplate(w http.ResponseWriter, r *http.Request) {
	var t snapshots.BoxTemplate
	if err := decode(r, &t, "backend, kind, source, command, user, env, limits, hasScreen and screenUrl"); err != nil {
		s.fail(w, r, err)
		return
	}
	name := chi.URLParam(r, "template")
	if t.Name != "" && t.Name != name {
		s.fail(w, r, invalid("The template's name is in the path: leave name out, or give the same."))
		return
	}
	t.Name = name
	if err := s.boxes.SaveTemplate(r.Context(), caller(r), t); err != nil {
		s.fail(w, r, err)
		return
	}
	saved, err := s.boxes.Template(r.Context(), name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, saved)
}
