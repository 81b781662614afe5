package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/api/answers"
	"github.com/boxsnap/boxsnap/app/api/toolparams"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

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
func (s agentTools) toolSnapshotFiles(w http.ResponseWriter, r *http.Request) {
	var p toolparams.LookParams
	if err := decode(r, &p, "box, snapshot and path (a folder inside the snapshot; its top when left out)"); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := checkPath(p.Path); err != nil {
		s.fail(w, r, err)
		return
	}
	a, err := s.FolderOf(r.Context(), caller(r), p.Box, p.Snapshot, p.Path)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

// toolSnapshotFile is box_snapshot_file: one file of a snapshot the thread
// may see, its text up to the cap, as GET …/file answers it. It changes
// nothing.
func (s agentTools) toolSnapshotFile(w http.ResponseWriter, r *http.Request) {
	var p toolparams.LookParams
	if err := decode(r, &p, "box, snapshot and path (a file inside the snapshot)"); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := checkPath(p.Path); err != nil {
		s.fail(w, r, err)
		return
	}
	a, err := s.FileOf(r.Context(), caller(r), p.Box, p.Snapshot, p.Path)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

// toolLineage is box_lineage: what a snapshot was taken from, and so on
// back; without a snapshot, the box's head and the head's lineage. It
// changes nothing.
func (s agentTools) toolLineage(w http.ResponseWriter, r *http.Request) {
	var p toolparams.LineageParams
	if err := decode(r, &p, "box, and optionally snapshot"); err != nil {
		s.fail(w, r, err)
		return
	}
	l, err := s.LineageOf(r.Context(), caller(r), p.Box, p.Snapshot)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, l)
}

// toolBoxList is box_list: the boxes of the agent's own thread, as GET
// /boxes answers them. It changes nothing.
func (s agentTools) toolBoxList(w http.ResponseWriter, r *http.Request) {
	var p toolparams.BoxListParams
	if err := decodeOptional(r, &p, "no parameters"); err != nil {
		s.fail(w, r, err)
		return
	}
	a, err := s.BoxesOf(r.Context(), caller(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

// toolBoxMake is box_make: a new box of the agent's own thread, made from a
// box template, as POST /boxes makes it (201 and the box).
func (s agentTools) toolBoxMake(w http.ResponseWriter, r *http.Request) {
	p, ok := openTool(s.failer, w, r, "template, and optionally name and request", func(p *toolparams.BoxMakeParams) toolOpening {
		return toolOpening{request: p.Request}
	})
	if !ok {
		return
	}
	c := caller(r)
	b, err := s.boxes.AcquireBox(r.Context(), c, snapshots.BoxRequest{Name: p.Name, Template: p.Template})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, answers.BoxView(c, b))
}
