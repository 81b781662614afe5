package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// lookParams are box_snapshot_files' and box_snapshot_file's parameters: a
// snapshot, and a path inside it (its top folder when empty).
type lookParams struct {
	Box      string `json:"box"`
	Snapshot string `json:"snapshot"`
	Path     string `json:"path"`
}

// checkPath refuses a path that is not text or is too long to name
// anything; what it names the core checks, never outside the snapshot.
func checkPath(path string) error {
	if len(path) > 4096 || !isText(path) {
		return invalid("path must be a path inside the box, as text of at most 4096 characters.")
	}
	return nil
}

// toolSnapshotFiles is box_snapshot_files: one folder of a snapshot the
// thread may see, as GET …/files answers it. It changes nothing.
func (s *server) toolSnapshotFiles(w http.ResponseWriter, r *http.Request) {
	var p lookParams
	if err := decode(r, &p, "box, snapshot and path (a folder inside the snapshot; its top when left out)"); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := checkPath(p.Path); err != nil {
		s.fail(w, r, err)
		return
	}
	a, err := s.folderOf(r.Context(), caller(r), p.Box, p.Snapshot, p.Path)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

// toolSnapshotFile is box_snapshot_file: one file of a snapshot the thread
// may see, its text up to the cap, as GET …/file answers it. It changes
// nothing.
func (s *server) toolSnapshotFile(w http.ResponseWriter, r *http.Request) {
	var p lookParams
	if err := decode(r, &p, "box, snapshot and path (a file inside the snapshot)"); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := checkPath(p.Path); err != nil {
		s.fail(w, r, err)
		return
	}
	a, err := s.fileOf(r.Context(), caller(r), p.Box, p.Snapshot, p.Path)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

// lineageParams are box_lineage's parameters: a box, and one of its
// snapshots, optional.
type lineageParams struct {
	Box      string `json:"box"`
	Snapshot string `json:"snapshot"`
}

// toolLineage is box_lineage: what a snapshot was taken from, and so on
// back; without a snapshot, the box's head and the head's lineage. It
// changes nothing.
func (s *server) toolLineage(w http.ResponseWriter, r *http.Request) {
	var p lineageParams
	if err := decode(r, &p, "box, and optionally snapshot"); err != nil {
		s.fail(w, r, err)
		return
	}
	l, err := s.lineageOf(r.Context(), caller(r), p.Box, p.Snapshot)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, l)
}

// boxListParams are box_list's parameters: none.
type boxListParams struct{}

// toolBoxList is box_list: the boxes of the agent's own thread, as GET
// /boxes answers them. It changes nothing.
func (s *server) toolBoxList(w http.ResponseWriter, r *http.Request) {
	var p boxListParams
	if err := decodeOptional(r, &p, "no parameters"); err != nil {
		s.fail(w, r, err)
		return
	}
	a, err := s.boxesOf(r.Context(), caller(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

// boxMakeParams are box_make's parameters: a box template's name, and the
// box's name, optional. An agent never names a backend, a host or a source.
type boxMakeParams struct {
	Template string `json:"template"`
	Name     string `json:"name"`
	Request  string `json:"request"`
}

// toolBoxMake is box_make: a new box of the agent's own thread, made from a
// box template, as POST /boxes makes it (201 and the box).
func (s *server) toolBoxMake(w http.ResponseWriter, r *http.Request) {
	var p boxMakeParams
	if err := decode(r, &p, "template, and optionally name and request"); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := checkRequest(p.Request); err != nil {
		s.fail(w, r, err)
		return
	}
	c := caller(r)
	b, err := s.boxes.AcquireBox(r.Context(), c, snapshots.BoxRequest{Name: p.Name, Template: p.Template})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, boxView(c, b))
}
