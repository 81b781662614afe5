package api

import (
	"context"
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/heads"
)

// snapshotLineage answers what a snapshot was taken from, and so on back,
// as the caller may see it.
func (s snapshotReads) snapshotLineage(w http.ResponseWriter, r *http.Request) {
	l, err := s.lineageOf(r.Context(), caller(r), param(r, "box"), param(r, "snapshot"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, l)
}

// lineageOf is a snapshot's lineage as the caller may see it, or the box's
// when ref is empty: its head, the snapshot its state descends from, and
// the head's lineage.
func (s lookups) lineageOf(ctx context.Context, c snapshots.Caller, box, ref string) (heads.Lineage, error) {
	if ref == "" {
		if err := checkRef("box", box); err != nil {
			return heads.Lineage{}, err
		}
		return s.heads.BoxLineage(ctx, c, box)
	}
	if err := checkBoxAndSnapshot(box, ref); err != nil {
		return heads.Lineage{}, err
	}
	sn, _, err := s.core.SnapshotOfBox(ctx, c, box, ref)
	if err != nil {
		return heads.Lineage{}, err
	}
	return s.heads.SnapshotLineage(ctx, c, sn.ID)
}
