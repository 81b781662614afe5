package api

import (
	"github.com/boxsnap/boxsnap/app/wire"
	"net/http"
)

// snapshotFiles lists one folder of a snapshot (?path=, the top when
// empty).
func (s *server) snapshotFiles(w http.ResponseWriter, r *http.Request) {
	box, ref := param(r, "box"), param(r, "snapshot")
	if err := checkBoxAndSnapshot(box, ref); err != nil {
		s.fail(w, r, err)
		return
	}
	c := caller(r)
	sn, b, err := s.core.SnapshotOfBox(r.Context(), c, box, ref)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	l, err := s.contents.Browse(r.Context(), c, sn.ID, r.URL.Query().Get("path"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.FilesAnswer{Box: b.Name, Snapshot: sn.ID, Name: sn.Name, Path: l.Path, Entries: l.Entries})
}

// snapshotFile shows one file of a snapshot (?path=): its text up to the
// cap, with words when it stops there; a link as a link.
func (s *server) snapshotFile(w http.ResponseWriter, r *http.Request) {
	box, ref := param(r, "box"), param(r, "snapshot")
	if err := checkBoxAndSnapshot(box, ref); err != nil {
		s.fail(w, r, err)
		return
	}
	c := caller(r)
	sn, b, err := s.core.SnapshotOfBox(r.Context(), c, box, ref)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	f, err := s.contents.ShowFile(r.Context(), c, sn.ID, r.URL.Query().Get("path"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.FileAnswer{Box: b.Name, Snapshot: sn.ID, Entry: f.Entry, Text: f.Text, Binary: f.Binary, Cut: f.Cut})
}
