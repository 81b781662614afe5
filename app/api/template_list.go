package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/wire"
)

// listTemplates answers the box templates: the whole of each for the
// person; for an agent, the names it may make boxes from.
func (s settingsRoutes) listTemplates(w http.ResponseWriter, r *http.Request) {
	all, err := s.boxes.Templates(r.Context())
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
