package api

import (
	"context"
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/wire"
)

// snapshotFiles lists one folder of a snapshot (?path=, the top when
// empty).
func (s snapshotReads) snapshotFiles(w http.ResponseWriter, r *http.Request) {
	a, err := s.folderOf(r.Context(), caller(r), param(r, "box"), param(r, "snapshot"), r.URL.Query().Get("path"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

// folderOf is one folder of a snapshot the caller may see, as the REST
// route and box_snapshot_files answer it.
func (s lookups) folderOf(ctx context.Context, c snapshots.Caller, box, ref, path string) (wire.FilesAnswer, error) {
	if err := checkBoxAndSnapshot(box, ref); err != nil {
		return wire.FilesAnswer{}, err
	}
	sn, b, err := s.core.SnapshotOfBox(ctx, c, box, ref)
	if err != nil {
		return wire.FilesAnswer{}, err
	}
	l, err := s.contents.Browse(ctx, c, sn.ID, path)
	if err != nil {
		return wire.FilesAnswer{}, err
	}
	return wire.FilesAnswer{Box: b.Name, Snapshot: sn.ID, Name: sn.Name, Path: l.Path, Entries: l.Entries}, nil
}

// snapshotFile shows one file of a snapshot (?path=): its text up to the
// cap, with words when it stops there; a link as a link.
func (s snapshotReads) snapshotFile(w http.ResponseWriter, r *http.Request) {
	a, err := s.fileOf(r.Context(), caller(r), param(r, "box"), param(r, "snapshot"), r.URL.Query().Get("path"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

// fileOf is one file of a snapshot the caller may see, as the REST route
// and box_snapshot_file answer it.
func (s lookups) fileOf(ctx context.Context, c snapshots.Caller, box, ref, path string) (wire.FileAnswer, error) {
	if err := checkBoxAndSnapshot(box, ref); err != nil {
		return wire.FileAnswer{}, err
	}
	sn, b, err := s.core.SnapshotOfBox(ctx, c, box, ref)
	if err != nil {
		return wire.FileAnswer{}, err
	}
	f, err := s.contents.ShowFile(ctx, c, sn.ID, path)
	if err != nil {
		return wire.FileAnswer{}, err
	}
	return wire.FileAnswer{Box: b.Name, Snapshot: sn.ID, Entry: f.Entry, Text: f.Text, Binary: f.Binary, Cut: f.Cut}, nil
}
