package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/boxsnap/boxsnap/app/api/answers"
	"github.com/boxsnap/boxsnap/app/api/toolparams"
	"github.com/boxsnap/boxsnap/app/pictures"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/app/snapshots/heads"
	"github.com/boxsnap/boxsnap/app/snapshots/hosts"
	"github.com/boxsnap/boxsnap/app/snapshots/keep"
	"github.com/boxsnap/boxsnap/app/snapshots/plans"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	"github.com/boxsnap/boxsnap/app/snapshots/tab"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/app/wire"
	"github.com/boxsnap/boxsnap/providers"
)

// This file holds each group of handlers with the fields it holds, and
// builds each from the server. No group holds the server: each holds the
// seams its handlers call, and the shared waits and reads through an
// interface it declares, naming the ones it uses. Every seam is asked with
// the request's caller, so a group answers only for what that caller may
// see.

// failer answers a refusal or an internal error (fail) and a dry run's
// plan (answer); every group holds one.
type failer struct{ logger *slog.Logger }

// operations wait for an operation the caller may see and answer for it:
// its end, its failure, its words; they hold the seams and the reads a
// route and a tool answer alike (answers.Lookups).
type operations struct {
	failer
	answers.Lookups
}

// operationAnswerer answers an operation just admitted (answerOperation).
type operationAnswerer interface {
	answerOperation(w http.ResponseWriter, r *http.Request, op *snapshots.Operation, wait bool)
}

// settingsRoutes: the settings, the box templates, a backend forgotten.
type settingsRoutes struct {
	failer
	core  *snapshots.Service
	boxes *boxes.Boxes
}

func newSettingsRoutes(s *server) settingsRoutes {
	return settingsRoutes{failer: s.failer, core: s.Core, boxes: s.Boxes}
}

// approvalRequests: the person's word asked for: listed, read, approved, declined.
type approvalRequests struct {
	failer
	operationAnswerer
	core      *snapshots.Service
	approvals *approvals.Approvals
}

func newApprovalRequests(s *server) approvalRequests {
	return approvalRequests{failer: s.failer, operationAnswerer: s.operations, core: s.Core, approvals: s.approvals}
}

// snapshotMoves: export, import, and share codes made, revoked, redeemed, copied.
type snapshotMoves struct {
	failer
	moveOperations
	contents *contents.Contents
}

// moveOperations are an import's wait and answer.
type moveOperations interface {
	operationAnswerer
	waitOp(ctx context.Context, c snapshots.Caller, id string) (*snapshots.Operation, error)
}

func newSnapshotMoves(s *server) snapshotMoves {
	return snapshotMoves{failer: s.failer, moveOperations: s.operations, contents: s.Contents}
}

// boxRoutes: a box listed, made, read, released, reset and undone, its
// history, presence, log and lineage, the trash listed, restored, emptied.
type boxRoutes struct {
	failer
	boxOperations
	core     *snapshots.Service
	boxes    *boxes.Boxes
	keeps    *keep.Keeps
	restores *restore.Restores
	plans    *plans.Plans
}

// boxOperations: an operation's answer, the boxes one sees, a box's lineage.
type boxOperations interface {
	operationAnswerer
	BoxesOf(ctx context.Context, c snapshots.Caller) (wire.BoxesAnswer, error)
	LineageOf(ctx context.Context, c snapshots.Caller, box, ref string) (heads.Lineage, error)
}

func newBoxRoutes(s *server) boxRoutes {
	return boxRoutes{failer: s.failer, boxOperations: s.operations, core: s.Core, boxes: s.Boxes,
		keeps: s.Keeps, restores: s.Restores, plans: s.plans}
}

// snapshotReads: the lists, one snapshot, its files, download,
// comparison, lineage and picture. No seam that changes a box.
type snapshotReads struct {
	failer
	readLookups
	core     *snapshots.Service
	contents *contents.Contents
	pictures *pictures.Pictures
	tab      *tab.Tab
}

// readLookups are the shared reads the tools answer alike.
type readLookups interface {
	ListAnswer(ctx context.Context, c snapshots.Caller, list []snapshots.BoxSnapshots) (wire.ListAnswer, error)
	Full(ctx context.Context, sn *snapshots.Snapshot, tz *time.Location) wire.ListedFull
	FolderOf(ctx context.Context, c snapshots.Caller, box, ref, path string) (wire.FilesAnswer, error)
	FileOf(ctx context.Context, c snapshots.Caller, box, ref, path string) (wire.FileAnswer, error)
	Compare(ctx context.Context, c snapshots.Caller, box, ref, against, path string, offset, limit int) (*wire.DiffAnswer, error)
	LineageOf(ctx context.Context, c snapshots.Caller, box, ref string) (heads.Lineage, error)
}

func newSnapshotReads(s *server) snapshotReads {
	return snapshotReads{failer: s.failer, readLookups: s.Lookups, core: s.Core, contents: s.Contents,
		pictures: s.pictures, tab: s.tab}
}

// forkMany: a fork into many boxes (box_fork and POST .../fork with count).
type forkMany struct {
	failer
	forkOperations
	core  *snapshots.Service
	forks *fork.Forks
}

// forkOperations are the snapshot of the box now, taken once for every
// fork, its delete when the forks are refused, and a box's name.
type forkOperations interface {
	forkCapture(w http.ResponseWriter, r *http.Request, p toolparams.ForkToolParams) (tookForFork, bool)
	undoForkTake(ctx context.Context, c snapshots.Caller, id, name string, refused error) error
	BoxName(ctx context.Context, c snapshots.Caller, op *snapshots.Operation) string
}

func newForkMany(s *server) forkMany {
	return forkMany{failer: s.failer, forkOperations: s.operations, core: s.Core, forks: s.Forks}
}

// snapshotChanges: a snapshot taken, or its restore, fork, delete, name,
// note, keep, save and renewal.
type snapshotChanges struct {
	failer
	changeOperations
	core     *snapshots.Service
	take     *take.Take
	keeps    *keep.Keeps
	restores *restore.Restores
	forks    *fork.Forks
	plans    *plans.Plans
	many     forkMany
}

// changeOperations: an operation's answer, a snapshot as the listing shows it.
type changeOperations interface {
	operationAnswerer
	Full(ctx context.Context, sn *snapshots.Snapshot, tz *time.Location) wire.ListedFull
}

func newSnapshotChanges(s *server) snapshotChanges {
	return snapshotChanges{failer: s.failer, changeOperations: s.operations, core: s.Core, take: s.Take,
		keeps: s.Keeps, restores: s.Restores, forks: s.Forks, plans: s.plans, many: newForkMany(s)}
}

// agentTools: the agent tools' own handlers, the table's (tools.go). Not
// the token check, the approvals or the hosts.
type agentTools struct {
	failer
	toolOperations
	toolLookups
	core     *snapshots.Service
	boxes    *boxes.Boxes
	take     *take.Take
	keeps    *keep.Keeps
	restores *restore.Restores
	forks    *fork.Forks
	plans    *plans.Plans
	pictures *pictures.Pictures
	many     forkMany
	trash    boxRoutes
}

// toolOperations start an operation and wait for it, answer how it ended,
// and take box_fork's snapshot of the box now (deleted again when the
// fork is refused).
type toolOperations interface {
	waitOp(ctx context.Context, c snapshots.Caller, id string) (*snapshots.Operation, error)
	runTool(w http.ResponseWriter, r *http.Request, start func(context.Context, snapshots.Caller) (*snapshots.Operation, error)) (*snapshots.Operation, bool)
	endedBadly(w http.ResponseWriter, r *http.Request, op *snapshots.Operation) bool
	Describe(ctx context.Context, c snapshots.Caller, op *snapshots.Operation) string
	forkCapture(w http.ResponseWriter, r *http.Request, p toolparams.ForkToolParams) (tookForFork, bool)
	undoForkTake(ctx context.Context, c snapshots.Caller, id, name string, refused error) error
}

// toolLookups are the shared reads, which the routes answer alike, and
// the words of a snapshot and a box.
type toolLookups interface {
	BoxName(ctx context.Context, c snapshots.Caller, op *snapshots.Operation) string
	PriceOf(ctx context.Context, c snapshots.Caller, id string) *providers.Price
	SnapshotPrice(sn *snapshots.Snapshot, b *snapshots.Box) *providers.Price
	RestoreWords(ctx context.Context, c snapshots.Caller, box string, res restore.RestoreResult) string
	ByWords(ctx context.Context, sn *snapshots.Snapshot) string
	BoxHoldsWords(b *snapshots.Box, n int) string
	BoxesOf(ctx context.Context, c snapshots.Caller) (wire.BoxesAnswer, error)
	FolderOf(ctx context.Context, c snapshots.Caller, box, ref, path string) (wire.FilesAnswer, error)
	FileOf(ctx context.Context, c snapshots.Caller, box, ref, path string) (wire.FileAnswer, error)
	Compare(ctx context.Context, c snapshots.Caller, box, ref, against, path string, offset, limit int) (*wire.DiffAnswer, error)
	LineageOf(ctx context.Context, c snapshots.Caller, box, ref string) (heads.Lineage, error)
}

func newAgentTools(s *server) agentTools {
	return agentTools{failer: s.failer, toolOperations: s.operations, toolLookups: s.Lookups, core: s.Core,
		boxes: s.Boxes, take: s.Take, keeps: s.Keeps, restores: s.Restores, forks: s.Forks, plans: s.plans,
		pictures: s.pictures, many: newForkMany(s), trash: newBoxRoutes(s)}
}

// tool is a handler of agentTools as the table holds it, run on the server
// the call came to.
func tool(h func(agentTools, http.ResponseWriter, *http.Request)) func(*server, http.ResponseWriter, *http.Request) {
	return func(s *server, w http.ResponseWriter, r *http.Request) { h(newAgentTools(s), w, r) }
}

// hostRoutes: the hosts listed, one marked gone, its boxes taken over,
// and a box's move to another host; the owner's alone.
type hostRoutes struct {
	failer
	operationAnswerer
	hosts *hosts.Hosts
}

func newHostRoutes(s *server) hostRoutes {
	return hostRoutes{failer: s.failer, operationAnswerer: s.operations, hosts: s.hosts}
}

// headRoutes: box_head's and PUT /boxes/{box}/head's one handler.
type headRoutes struct {
	failer
	heads *heads.Heads
}

func newHeadRoutes(s *server) headRoutes { return headRoutes{failer: s.failer, heads: s.Heads} }

// headTool is setHead as the tool table holds it.
func headTool(s *server, w http.ResponseWriter, r *http.Request) { setHead(newHeadRoutes(s), w, r) }
