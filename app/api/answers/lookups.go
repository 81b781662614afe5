package answers

import (
	"context"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/app/snapshots/heads"
	"github.com/boxsnap/boxsnap/app/snapshots/keep"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/app/wire"
	"github.com/boxsnap/boxsnap/providers"
)

// Lookups are the reads a route and a tool answer alike (a folder, a file,
// a comparison, a lineage, the boxes, a listing) and the words of a
// snapshot, a box and an operation's result, from the core's seams.
type Lookups struct {
	Core     *snapshots.Service
	Contents *contents.Contents
	Heads    *heads.Heads
	Boxes    *boxes.Boxes
	// Take, Restores, Keeps and Forks read their operations' results, for
	// the words of what an operation did (Describe).
	Take     *take.Take
	Restores *restore.Restores
	Keeps    *keep.Keeps
	Forks    *fork.Forks
	// CheckRef refuses a box's or a snapshot's reference that names
	// nothing (what says which), before the core is asked: app/api's own
	// check, so the refusal reads as every route's does.
	CheckRef func(what, ref string) error
}

// checkBoxAndSnapshot refuses a box or a snapshot that names nothing.
func (s Lookups) checkBoxAndSnapshot(box, ref string) error {
	if err := s.CheckRef("box", box); err != nil {
		return err
	}
	return s.CheckRef("snapshot", ref)
}

// BoxesOf is the boxes the caller may see, as GET /boxes and box_list
// answer them.
func (s Lookups) BoxesOf(ctx context.Context, c snapshots.Caller) (wire.BoxesAnswer, error) {
	boxes, err := s.Boxes.List(ctx, c)
	if err != nil {
		return wire.BoxesAnswer{}, err
	}
	ans := wire.BoxesAnswer{Boxes: []*snapshots.Box{}}
	for _, b := range boxes {
		ans.Boxes = append(ans.Boxes, BoxView(c, b))
	}
	return ans, nil
}

// BoxName is the name of the operation's box, or "the box" when it has
// none or the caller cannot see it.
func (s Lookups) BoxName(ctx context.Context, c snapshots.Caller, op *snapshots.Operation) string {
	if op.BoxID == nil {
		return "the box"
	}
	if b, err := s.Core.Box(ctx, c, *op.BoxID); err == nil {
		return b.Name
	}
	return "the box"
}

// FolderOf is one folder of a snapshot the caller may see, as the REST
// route and box_snapshot_files answer it.
func (s Lookups) FolderOf(ctx context.Context, c snapshots.Caller, box, ref, path string) (wire.FilesAnswer, error) {
	if err := s.checkBoxAndSnapshot(box, ref); err != nil {
		return wire.FilesAnswer{}, err
	}
	sn, b, err := s.Core.SnapshotOfBox(ctx, c, box, ref)
	if err != nil {
		return wire.FilesAnswer{}, err
	}
	l, err := s.Contents.Browse(ctx, c, sn.ID, path)
	if err != nil {
		return wire.FilesAnswer{}, err
	}
	return wire.FilesAnswer{Box: b.Name, Snapshot: sn.ID, Name: sn.Name, Path: l.Path, Entries: l.Entries}, nil
}

// FileOf is one file of a snapshot the caller may see, as the REST route
// and box_snapshot_file answer it.
func (s Lookups) FileOf(ctx context.Context, c snapshots.Caller, box, ref, path string) (wire.FileAnswer, error) {
	if err := s.checkBoxAndSnapshot(box, ref); err != nil {
		return wire.FileAnswer{}, err
	}
	sn, b, err := s.Core.SnapshotOfBox(ctx, c, box, ref)
	if err != nil {
		return wire.FileAnswer{}, err
	}
	f, err := s.Contents.ShowFile(ctx, c, sn.ID, path)
	if err != nil {
		return wire.FileAnswer{}, err
	}
	return wire.FileAnswer{Box: b.Name, Snapshot: sn.ID, Entry: f.Entry, Text: f.Text, Binary: f.Binary, Cut: f.Cut}, nil
}

// Compare is the REST route's and box_snapshot_diff's one comparison.
func (s Lookups) Compare(ctx context.Context, c snapshots.Caller, box, ref, against, path string, offset, limit int) (*wire.DiffAnswer, error) {
	if against != "" {
		if err := s.CheckRef("against", against); err != nil {
			return nil, err
		}
	}
	sn, b, err := s.Core.SnapshotOfBox(ctx, c, box, ref)
	if err != nil {
		return nil, err
	}
	a := &wire.DiffAnswer{Box: b.Name, Snapshot: sn.ID, Name: sn.Name, Against: "now", Changes: []providers.FileChange{}}
	if path != "" {
		diff, err := s.Contents.DiffFile(ctx, c, sn.ID, against, path)
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
	cmp, err := s.Contents.Compare(ctx, c, sn.ID, against, offset, limit)
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

// LineageOf is a snapshot's lineage as the caller may see it, or the box's
// when ref is empty: its head, the snapshot its state descends from, and
// the head's lineage.
func (s Lookups) LineageOf(ctx context.Context, c snapshots.Caller, box, ref string) (heads.Lineage, error) {
	if ref == "" {
		if err := s.CheckRef("box", box); err != nil {
			return heads.Lineage{}, err
		}
		return s.Heads.BoxLineage(ctx, c, box)
	}
	if err := s.checkBoxAndSnapshot(box, ref); err != nil {
		return heads.Lineage{}, err
	}
	sn, _, err := s.Core.SnapshotOfBox(ctx, c, box, ref)
	if err != nil {
		return heads.Lineage{}, err
	}
	return s.Heads.SnapshotLineage(ctx, c, sn.ID)
}

// ListAnswer is the listing of these boxes' snapshots.
func (s Lookups) ListAnswer(ctx context.Context, c snapshots.Caller, list []snapshots.BoxSnapshots) (wire.ListAnswer, error) {
	settings, err := s.Core.Settings(ctx)
	if err != nil {
		return wire.ListAnswer{}, err
	}
	tz := s.Core.TimeZone(ctx)
	ans := wire.ListAnswer{Boxes: []wire.BoxSnapshots{}}
	for _, bs := range list {
		out := wire.BoxSnapshots{Box: BoxView(c, bs.Box), Snapshots: []wire.ListedFull{}}
		for _, sn := range bs.Snapshots {
			out.Snapshots = append(out.Snapshots, s.Full(ctx, sn, tz))
		}
		out.Counted = snapshots.CountOf(bs.Snapshots)
		out.OfLimit = CountWords(out.Counted.ToLimit, settings.PerBox)
		out.Count = out.Counted.Words()
		out.Message = s.BoxHoldsWords(bs.Box, len(bs.Snapshots))
		ans.Boxes = append(ans.Boxes, out)
	}
	return ans, nil
}

// Full is one snapshot as a listing and a snapshot's route answer it.
func (s Lookups) Full(ctx context.Context, sn *snapshots.Snapshot, tz *time.Location) wire.ListedFull {
	return wire.ListedFull{Snapshot: sn, By: s.ByWords(ctx, sn), When: sn.TakenAt.In(tz).Format("Mon 2 Jan 15:04"),
		Size: snapshots.SizeOfWords(sn.SizeBytes, sn.SizeMeaning), Undo: sn.IsUndo()}
}

// BoxView is a box as the caller may see it: an agent sees its own
// thread's workspace on it, never other threads'.
func BoxView(c snapshots.Caller, b *snapshots.Box) *snapshots.Box {
	if c.Kind != snapshots.CallerAgent {
		return b
	}
	v := *b
	v.Presence.Workspaces = nil
	for _, ws := range b.Presence.Workspaces {
		if ws.Thread == c.Thread {
			v.Presence.Workspaces = append(v.Presence.Workspaces, ws)
		}
	}
	return &v
}
