package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// getSettings answers the Snapshots settings: the person only.
func (s settingsRoutes) getSettings(w http.ResponseWriter, r *http.Request) {
	if !caller(r).IsPerson() {
		s.fail(w, r, &badRequest{code: snapshots.CodeForbidden, words: snapshots.OnlyPersonSettingsWords})
		return
	}
	st, err := s.core.Settings(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}
