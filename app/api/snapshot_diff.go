package api

import (
	"net/http"
	"strconv"

	"github.com/boxsnap/boxsnap/app/wire"

	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/providers"
)

// snapshotDiff compares a snapshot with the box now, or with another
// snapshot of the same box (?against=), a page at a time (?offset=,
// ?limit=); with ?path= it answers that text file's unified diff.
func (s snapshotReads) snapshotDiff(w http.ResponseWriter, r *http.Request) {
	box, ref := param(r, "box"), param(r, "snapshot")
	if err := checkBoxAndSnapshot(box, ref); err != nil {
		s.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	offset, err := intParam(q.Get("offset"), "offset")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	limit, err := intParam(q.Get("limit"), "limit")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	a, err := s.compare(r, box, ref, q.Get("against"), q.Get("path"), offset, limit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

func intParam(v, name string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 1<<30 {
		return 0, invalid("%s must be a whole number, 0 or more.", name)
	}
	return n, nil
}

// compare is the REST route's and box_snapshot_diff's one comparison.
func (s lookups) compare(r *http.Request, box, ref, against, path string, offset, limit int) (*wire.DiffAnswer, error) {
	if against != "" {
		if err := checkRef("against", against); err != nil {
			return nil, err
		}
	}
	ctx, c := r.Context(), caller(r)
	sn, b, err := s.core.SnapshotOfBox(ctx, c, box, ref)
	if err != nil {
		return nil, err
	}
	a := &wire.DiffAnswer{Box: b.Name, Snapshot: sn.ID, Name: sn.Name, Against: "now", Changes: []providers.FileChange{}}
	if path != "" {
		diff, err := s.contents.DiffFile(ctx, c, sn.ID, against, path)
		if err != nil {
			return nil, err
		}
		clean, _ := contents.CleanPath(path)
		a.Path, a.Diff = clean, &diff
		if against != "" {
			a.Against = against
		}
		a.Message = fileDiffWords(clean, sn.Name, against, diff)
		return a, nil
	}
	cmp, err := s.contents.Compare(ctx, c, sn.ID, against, offset, limit)
	if err != nil {
		return nil, err
	}
	if cmp.Against != nil {
		a.Against = cmp.Against.ID
	}
	a.Added, a.Removed, a.Changed, a.Total, a.Offset, a.Changes = cmp.Added, cmp.Removed, cmp.Changed, cmp.Total, cmp.Offset, cmp.Changes
	if end := cmp.Offset + len(cmp.Changes); end < cmp.Total {
		a.Next = &end
	}
	a.Message = compareWords(cmp)
	return a, nil
}
