package api

import (
	"net/http"
)

// renewSnapshot is "Keep 30 more days": the setting's days added to a kept
// snapshot's keep date, refused past the paid ceiling. The person only.
func (s snapshotChanges) renewSnapshot(w http.ResponseWriter, r *http.Request) {
	s.keepChange(w, r, s.keeps.Renew)
}
