package api

import (
	"net/http"
	"strconv"
)

// snapshotPicture answers a snapshot's picture of the screen, a JPEG,
// through mayAct: a snapshot the caller may not see reads as not found.
func (s snapshotReads) snapshotPicture(w http.ResponseWriter, r *http.Request) {
	box, ref := param(r, "box"), param(r, "snapshot")
	if err := checkBoxAndSnapshot(box, ref); err != nil {
		s.fail(w, r, err)
		return
	}
	c := caller(r)
	sn, _, err := s.core.SnapshotOfBox(r.Context(), c, box, ref)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	pic, err := s.pictures.Get(r.Context(), c, sn.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "image/jpeg")
	w.Header().Set("Content-Length", strconv.Itoa(len(pic.JPEG)))
	w.Header().Set("Cache-Control", "private, no-store")
	_, _ = w.Write(pic.JPEG)
}
