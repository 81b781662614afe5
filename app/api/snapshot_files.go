package api

import "net/http"

// snapshotFiles lists one folder of a snapshot (?path=, the top when
// empty).
func (s snapshotReads) snapshotFiles(w http.ResponseWriter, r *http.Request) {
	a, err := s.FolderOf(r.Context(), caller(r), param(r, "box"), param(r, "snapshot"), r.URL.Query().Get("path"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

// snapshotFile shows one file of a snapshot (?path=): its text up to the
// cap, with words when it stops there; a link as a link.
func (s snapshotReads) snapshotFile(w http.ResponseWriter, r *http.Request) {
	a, err := s.FileOf(r.Context(), caller(r), param(r, "box"), param(r, "snapshot"), r.URL.Query().Get("path"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}
