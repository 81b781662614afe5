package api

import (
	"net/http"
)

// unkeepSnapshot stops keeping a snapshot: the person only.
func (s snapshotChanges) unkeepSnapshot(w http.ResponseWriter, r *http.Request) {
	s.keepChange(w, r, s.keeps.Unkeep)
}
