package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/api/toolparams"
)

const snapshotDiffTakes = "box, snapshot, against (another snapshot of the box; the box now when left out), path (a text file, for its diff), offset and limit"

// toolSnapshotDiff is box_snapshot_diff: what changed since a snapshot, in
// the box now or in another snapshot of the same box, a page at a time, or
// one text file's unified diff. It changes nothing.
func (s agentTools) toolSnapshotDiff(w http.ResponseWriter, r *http.Request) {
	var p toolparams.SnapshotDiffParams
	if err := decode(r, &p, snapshotDiffTakes); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := checkBoxAndSnapshot(p.Box, p.Snapshot); err != nil {
		s.fail(w, r, err)
		return
	}
	if p.Offset < 0 || p.Limit < 0 {
		s.fail(w, r, invalid("offset and limit are whole numbers, 0 or more."))
		return
	}
	if len(p.Path) > 4096 || !isText(p.Path) {
		s.fail(w, r, invalid("path must be a path inside the box, as text of at most 4096 characters."))
		return
	}
	a, err := s.Compare(r.Context(), caller(r), p.Box, p.Snapshot, p.Against, p.Path, p.Offset, p.Limit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}
