package web

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/web/pagemodel"
	"github.com/go-chi/chi/v5"
)

// showSnapshotSettingsSection shows one section of the snapshot settings; a
// section that is none is a 404.
func (s *Server) showSnapshotSettingsSection(w http.ResponseWriter, r *http.Request) {
	sec := chi.URLParam(r, "section")
	if pagemodel.SectionTitle(sec) == "" {
		http.NotFound(w, r)
		return
	}
	st, err := s.opts.Core.Settings(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.settingsPage(w, r, http.StatusOK, pagemodel.SettingsPage{Settings: st, Section: sec})
}
