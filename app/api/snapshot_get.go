package api

import "net/http"

// getSnapshot answers one snapshot of a box, by its name or ID.
func (s snapshotReads) getSnapshot(w http.ResponseWriter, r *http.Request) {
	box, ref := param(r, "box"), param(r, "snapshot")
	if err := checkBoxAndSnapshot(box, ref); err != nil {
		s.fail(w, r, err)
		return
	}
	sn, _, err := s.core.SnapshotOfBox(r.Context(), caller(r), box, ref)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.Full(r.Context(), sn, s.core.TimeZone(r.Context())))
}

func checkBoxAndSnapshot(box, ref string) error {
	if err := checkRef("box", box); err != nil {
		return err
	}
	return checkRef("snapshot", ref)
}
