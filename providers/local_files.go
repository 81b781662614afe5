package providers

import (
	"context"
	"io"
	"time"
)

// Optional interfaces a backend implements when it can: change a snapshot's
// keep date on its label, browse and compare a snapshot's files (moatbox's
// "Browse, download and compare files"), and export and import snapshots as
// archives (microsandbox's snapshot groups). The local backend implements all
// three; the web app and the API find them with a type assertion.

// Limits of browsing, downloading and comparing a snapshot's files, so a
// large snapshot cannot tie up the server.
const (
	// MaxReadBytes is the largest file ReadFile gives: 64 MiB.
	MaxReadBytes = 64 << 20
	// MaxDiffBytes is the largest text file DiffFile compares: 512 KiB a side.
	MaxDiffBytes = 512 << 10
)

// Labeler is implemented by backends that write a snapshot's keep date on its
// label after the take, so that a kept snapshot is found again as kept when
// boxsnap's records are lost.
type Labeler interface {
	// SetKeptUntil writes keptUntil (nil: not kept) on the snapshot's label.
	SetKeptUntil(ctx context.Context, ref SnapshotRef, keptUntil *time.Time) error
}

// FileEntry is one entry of a snapshot's folder, or the file a ReadFile gave.
type FileEntry struct {
	// Path is the entry's path inside the box, slash-separated, with no
	// leading slash.
	Path string `json:"path"`
	// Type is "file", "dir", "link" or "other".
	Type    string    `json:"type"`
	Mode    uint32    `json:"mode"` // permission bits and setuid/setgid/sticky
	Size    int64     `json:"size"`
	ModTime time.Time `json:"modTime"`
	// Target is a link's target, as stored; a link is never followed.
	Target string `json:"target,omitempty"`
}

// Browser is implemented by backends that read a snapshot's files where it
// lives. Every path is relative to the box's folder; a path that goes through
// a link or climbs with ".." is refused with a RefusedError.
type Browser interface {
	// ListFiles lists the entries of one folder of the snapshot ("" is the
	// box's top folder), sorted by name.
	ListFiles(ctx context.Context, ref SnapshotRef, dir string) ([]FileEntry, error)
	// ReadFile writes one regular file of the snapshot, of at most
	// MaxReadBytes, to w.
	ReadFile(ctx context.Context, ref SnapshotRef, path string, w io.Writer) (FileEntry, error)
	// DiffFile gives a line diff, in unified format, of one text file of at
	// most MaxDiffBytes between the snapshot and against: another snapshot,
	// or nil for the box's file now. An empty answer means no difference.
	DiffFile(ctx context.Context, ref SnapshotRef, against *SnapshotRef, path string) (string, error)
	// OpenFile opens one regular file of the snapshot, of any size, to be
	// streamed: a download. Its content is checked against what the snapshot
	// recorded as it is read; a mismatch is a read error at the end.
	OpenFile(ctx context.Context, ref SnapshotRef, path string) (io.ReadCloser, FileEntry, error)
	// WalkFiles calls fn with every entry under dir ("" is the top), dir
	// itself first and each folder before what it holds, in path order.
	WalkFiles(ctx context.Context, ref SnapshotRef, dir string, fn func(FileEntry) error) error
	// CompareFiles lists the paths that differ between the snapshot and
	// against (another snapshot of the same box), or the box's files now
	// (against nil), sorted by path. A folder is listed when it was added or
	// removed, never for what it holds.
	CompareFiles(ctx context.Context, ref SnapshotRef, against *SnapshotRef) ([]FileChange, error)
}

// How a path differs, in FileChange.Change: seen from the snapshot, a path
// was added since, removed since, or changed since.
const (
	ChangeAdded   = "added"
	ChangeRemoved = "removed"
	ChangeChanged = "changed"
)

// FileChange is one path that differs between a snapshot and what it is
// compared with.
type FileChange struct {
	Path   string `json:"path"`
	Change string `json:"change"` // ChangeAdded, ChangeRemoved or ChangeChanged
	// Type is the path's type where it is now ("file", "dir", "link",
	// "other"), or in the snapshot when it was removed.
	Type string `json:"type"`
	// Before is the size in the snapshot, After the size now (or in the
	// other snapshot); nil where the path is absent.
	Before *int64 `json:"before,omitempty"`
	After  *int64 `json:"after,omitempty"`
}

// ExportOptions says how one snapshot is exported.
type ExportOptions struct {
	// Base, when set, makes the archive incremental: it leaves out content the
	// base snapshot holds. An import finds that content in the same batch or
	// among the snapshots already there. Base supplies data only; it never
	// defines ancestry.
	Base *SnapshotRef
	// Name is the snapshot's member name in a group, carried in the archive,
	// never on a label. Empty: the snapshot's ID.
	Name string
	// Scrub, when set, exports a copy without what it lists (a share code's
	// copy, as Exporter.Scrub says): a new snapshot, with the ID AsID and no
	// parent, whose manifest leaves those paths out. Base is then ignored.
	// A copy that would still hold a credential is refused (a
	// BlockedError), and nothing is written.
	Scrub *Secrets
	AsID  string
	// Parent is the snapshot's parent in boxsnap's records, for a backend
	// whose snapshots do not name it themselves (a Docker image does not);
	// a backend whose snapshot names its own parent ignores it.
	Parent string
}

// ImportOptions says where a batch of archives goes.
type ImportOptions struct {
	// Group is the box the imported snapshots belong to (its ID), and the
	// namespace of their member names.
	Group string
	// RoomPercent is the room setting: the batch is refused before it is
	// published when its content takes the storage past it. 0 refuses only
	// content that does not fit.
	RoomPercent int
}

// ImportedSnapshot is one snapshot an import published, or found already
// there with the same content.
type ImportedSnapshot struct {
	Ref  SnapshotRef
	Name string
	// Parent is the ID of the snapshot it was taken after, from its own
	// manifest: the only source of ancestry.
	Parent string
	// Holds is what the imported snapshot holds here, which may be less than
	// its source held: a snapshot with memory is moved as its disk.
	Holds Holds
	// Already is set when the same snapshot was already there, identical; it
	// is installed only once.
	Already bool
}

// Exporter is implemented by backends that move snapshots between installs as
// archive files (microsandbox-snapshot-groups.txt).
type Exporter interface {
	// Scrub says what a copy scrubbed by sec is, changing nothing: the paths
	// it leaves out (sec's targets, found through the box's links, what is
	// hard-linked to or a copy of one, and files named as SecretName says)
	// and the credentials it would still hold, found by a scan of every
	// file it keeps. A copy with one Blocked is never exported.
	Scrub(ctx context.Context, ref SnapshotRef, sec Secrets) (*ScrubReport, error)
	// ExportSnapshot writes one snapshot as one archive to w: its disk (its
	// files, image or guest disk), never its memory.
	ExportSnapshot(ctx context.Context, ref SnapshotRef, opts ExportOptions, w io.Writer) error
	// ImportSnapshots reads a batch of archives, in any order, validates every
	// one (checksums, complete content, no conflicting ID or name) before
	// publishing any, then publishes them all. A refusal is a RefusedError in
	// words, and nothing is published.
	ImportSnapshots(ctx context.Context, opts ImportOptions, archives []io.Reader) ([]ImportedSnapshot, error)
}
