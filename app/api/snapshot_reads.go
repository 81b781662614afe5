package api

import (
	"context"
	"net/http"
	"time"

	"github.com/boxsnap/boxsnap/app/pictures"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/app/snapshots/heads"
	"github.com/boxsnap/boxsnap/app/snapshots/tab"
	"github.com/boxsnap/boxsnap/app/wire"
)

// snapshotReads are the handlers that read snapshots and change nothing:
// the lists, one snapshot, its files, download, comparison, lineage and
// picture. They hold the core, the contents seam (a download), the
// pictures, the Snapshots tab's lists and readLookups, nothing else of the
// server, and no seam that changes a box.
type snapshotReads struct {
	failer
	readLookups
	core     *snapshots.Service
	contents *contents.Contents
	pictures *pictures.Pictures
	tab      *tab.Tab
}

// readLookups is what snapshotReads ask of the shared reads, which the
// tools answer alike.
type readLookups interface {
	listAnswer(ctx context.Context, c snapshots.Caller, list []snapshots.BoxSnapshots) (wire.ListAnswer, error)
	full(ctx context.Context, sn *snapshots.Snapshot, tz *time.Location) wire.ListedFull
	folderOf(ctx context.Context, c snapshots.Caller, box, ref, path string) (wire.FilesAnswer, error)
	fileOf(ctx context.Context, c snapshots.Caller, box, ref, path string) (wire.FileAnswer, error)
	compare(r *http.Request, box, ref, against, path string, offset, limit int) (*wire.DiffAnswer, error)
	lineageOf(ctx context.Context, c snapshots.Caller, box, ref string) (heads.Lineage, error)
}
