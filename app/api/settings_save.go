package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// saveSettings changes the Snapshots settings: the fields sent replace the
// current ones, the rest stay; each number is checked against its range.
func (s settingsRoutes) saveSettings(w http.ResponseWriter, r *http.Request) {
	c := caller(r)
	if !c.IsPerson() {
		s.fail(w, r, &badRequest{code: snapshots.CodeForbidden, words: snapshots.OnlyPersonSettingsWords})
		return
	}
	st, err := s.core.Settings(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := decode(r, &st, "perBox, roomPercent, keepDays, agentsMayRestore, agentsMayRestoreMemory, pictures and ceilings"); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.core.SaveSettings(r.Context(), c, st); err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}
