package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/api/toolparams"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/wire"
)

// toolSnapshotSave is box_snapshot_save: an automatic snapshot of a box the
// thread may take snapshots of becomes an ordinary one, counted in the
// per-box limit and never thinned.
func (s agentTools) toolSnapshotSave(w http.ResponseWriter, r *http.Request) {
	p, ok := openTool(s.failer, w, r, "box and snapshot, and optionally name and request", func(p *toolparams.SaveParams) toolOpening {
		return toolOpening{refs: checkBoxAndSnapshot(p.Box, p.Snapshot), request: p.Request}
	})
	if !ok {
		return
	}
	sn, err := s.keeps.Save(r.Context(), caller(r), p.Box, p.Snapshot, p.Name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.SaveAnswer{Snapshot: sn.ID, Name: sn.Name, Automatic: sn.Automatic,
		Message: snapshots.SavedWords(sn.Name, " of "+sn.BoxName, sn.BoxName)})
}

// toolSnapshotUnsave is box_snapshot_unsave: a snapshot the thread may
// delete becomes automatic again, thinned as any other.
func (s agentTools) toolSnapshotUnsave(w http.ResponseWriter, r *http.Request) {
	p, ok := openTool(s.failer, w, r, "box and snapshot, and optionally request", func(p *toolparams.UnsaveParams) toolOpening {
		return toolOpening{refs: checkBoxAndSnapshot(p.Box, p.Snapshot), request: p.Request}
	})
	if !ok {
		return
	}
	sn, err := s.keeps.Unsave(r.Context(), caller(r), p.Box, p.Snapshot)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.SaveAnswer{Snapshot: sn.ID, Name: sn.Name, Automatic: sn.Automatic,
		Message: snapshots.UnsavedWords(sn.Name, " of "+sn.BoxName)})
}
