package api

import (
	"net/http"
)

// restoreFromTrash restores a box from the trash with its history
// (?request=<ID> makes a repeat the same restore; ?wait=true answers once it
// is done).
func (s boxRoutes) restoreFromTrash(w http.ResponseWriter, r *http.Request) {
	s.trashOperation(w, r, s.boxes.RestoreFromTrash)
}
