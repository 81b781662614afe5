package api

import (
	"net/http"
)

// emptyTrash releases a box in the trash now: its unkept snapshots go with
// it. Only the person empties the trash.
func (s *server) emptyTrash(w http.ResponseWriter, r *http.Request) {
	s.trashOperation(w, r, s.boxes.EmptyTrash)
}
