package api

import (
	"github.com/boxsnap/boxsnap/app/wire"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// listTemplates answers the box templates: the whole of each for the
// person; for an agent, the names it may make boxes from.
func (s *server) listTemplates(w http.ResponseWriter, r *http.Request) {
	all, err := s.core.Boxes().Templates(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if caller(r).IsPerson() {
		writeJSON(w, http.StatusOK, wire.TemplatesAnswer{Templates: all})
		return
	}
	views := make([]wire.TemplateView, 0, len(all))
	for _, t := range all {
		views = append(views, wire.TemplateView{Name: t.Name, Backend: t.Backend, Kind: t.Kind, HasScreen: t.HasScreen})
	}
	writeJSON(w, http.StatusOK, wire.TemplateViewsAnswer{Templates: views})
}

// saveTemplate adds or replaces a box template (the person).
func (s *server) saveTemplate(w http.ResponseWriter, r *http.Request) {
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
	if err := s.core.Boxes().SaveTemplate(r.Context(), caller(r), t); err != nil {
		s.fail(w, r, err)
		return
	}
	saved, err := s.core.Boxes().Template(r.Context(), name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, saved)
}

// deleteTemplate removes a box template (the person); its boxes stay.
func (s *server) deleteTemplate(w http.ResponseWriter, r *http.Request) {
	if err := s.core.Boxes().DeleteTemplate(r.Context(), caller(r), chi.URLParam(r, "template")); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
