package restore

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// Restores is a box's restore to one of its snapshots (with its guard, its
// dry run and its undo) and the box set straight after one; its Resets are
// a box's reset to a fresh box and the undo of either.
type Restores struct {
	k        kernel
	del      deleter
	taker    taker
	st       *store.Store
	ops      *operations.Engine
	install  string
	now      func() time.Time
	logger   *slog.Logger
	boxes    templates
	pictures snapshots.PictureKeeper
	asker    Asker
	preview  RestorePreviewer
	kinds    Kinds
	resets   *Resets
}

// Resets is a box's reset to a fresh box, what one would do, and the undo
// of a reset or a restore; the guard, the box set straight, the undos
// replaced and the undo's restore are r's.
type Resets struct {
	r       *Restores
	k       kernel
	taker   taker
	st      *store.Store
	ops     *operations.Engine
	install string
	logger  *slog.Logger
	boxes   templates
}

// kernel is what a restore and a reset use of the core's kernel: the
// record reads and locks, the plan, the room and the ceiling, admission,
// an operation's steps and end, the box log, the head, and the deletes an
// undo that replaces an older one runs; *snapshots.Service is one.
type kernel interface {
	Engine() *operations.Engine
	Install() string
	Admit(ctx context.Context, tx pgx.Tx, r snapshots.OpRequest) (*snapshots.Operation, error)
	Backend(id string) (snapshots.Backend, error)
	Box(ctx context.Context, c snapshots.Caller, ref string) (*snapshots.Box, error)
	BoxByID(ctx context.Context, q db.DBTX, id string) (*snapshots.Box, error)
	CeilingAdmits(ctx context.Context, tx db.DBTX, c snapshots.Caller, backend string, adds snapshots.Charge, settings snapshots.Settings) error
	ChangeNow(ctx context.Context, tx pgx.Tx, boxID, snapID, ref string, change snapshots.Change) (*snapshots.Box, *snapshots.Snapshot, error)
	DeletingPins(ctx context.Context, q db.DBTX, id, except string) ([]snapshots.Pin, error)
	ExistingRequest(ctx context.Context, q db.DBTX, c snapshots.Caller, requestID, kind string, target *string) (*snapshots.Operation, error)
	End(ctx context.Context, op *snapshots.Operation, state, errWords, observed string) error
	LockBox(ctx context.Context, tx pgx.Tx, id string) (*snapshots.Box, error)
	Log(ctx context.Context, q db.DBTX, box, kind string, c snapshots.Caller, words, snapshot, op string, data any)
	Pins(ctx context.Context, q db.DBTX, id, except string) ([]snapshots.Pin, error)
	Plan(ctx context.Context, c snapshots.Caller, boxRef, ref string) (*snapshots.Box, *snapshots.Snapshot, providers.SnapshotPlan, error)
	PlanError(b *snapshots.Box, be snapshots.Backend, err error) error
	PlanNow(ctx context.Context, b *snapshots.Box, be snapshots.Backend, ref *providers.SnapshotRef) (providers.SnapshotPlan, error)
	Repeated(ctx context.Context, c snapshots.Caller, requestID, kind, boxRef, snapRef string) (*snapshots.Operation, error)
	ReservePrice(ctx context.Context, tx db.DBTX, op string, backend string, snapping *providers.Snapshotting) error
	ReserveRoom(ctx context.Context, tx pgx.Tx, c snapshots.Caller, b *snapshots.Box, be snapshots.Backend, plan providers.SnapshotPlan, st snapshots.Settings, adds *int64) (*snapshots.Reserved, error)
	RoomFor(ctx context.Context, c snapshots.Caller, b *snapshots.Box, be snapshots.Backend, plan providers.SnapshotPlan, st snapshots.Settings, adds *int64) error
	SetHead(ctx context.Context, q db.DBTX, box, snapshot string)
	Settings(ctx context.Context) (snapshots.Settings, error)
	SnapshotByID(ctx context.Context, q db.DBTX, id string) (*snapshots.Snapshot, error)
	SnapshotOfBox(ctx context.Context, c snapshots.Caller, boxRef, ref string) (*snapshots.Snapshot, *snapshots.Box, error)
	SnapshotsOfBox(ctx context.Context, q db.DBTX, box string) ([]*snapshots.Snapshot, error)
	Step(ctx context.Context, op *snapshots.Operation, step string) error
	TaskRecorder(op *snapshots.Operation) providers.Recorder
	ThreadTitle(ctx context.Context, id *string) string
	TimeZone(ctx context.Context) *time.Location
	Unsettled(ctx context.Context, q db.DBTX, b *snapshots.Box) error
}

// deleter deletes snapshots within a step of an operation that holds the
// box's turn, a delete cut short finished as the step resumes; package
// keep's Keeps is one (Options.Deletes).
type deleter interface {
	DeleteStep(ctx context.Context, op *snapshots.Operation, sn *snapshots.Snapshot, b *snapshots.Box, be snapshots.Backend, c snapshots.Caller, why string) error
	DeleteWith(ctx context.Context, op *snapshots.Operation, sn *snapshots.Snapshot, b *snapshots.Box, be snapshots.Backend, c snapshots.Caller, why string, rec providers.Recorder) error
	FinishLeftDeletes(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, be snapshots.Backend, all []*snapshots.Snapshot, mine func(*snapshots.Snapshot) bool, c snapshots.Caller, why string) ([]string, error)
}

// taker takes the undo a restore or a reset takes first: a snapshot of the
// box as it is (TakeUndo), or ZFS's held copy of the stopped guest
// (TakeHeldUndo); each finds the one a restart cut short. undoTaker is
// one, over the take's TakeUndo.
type taker interface {
	TakeUndo(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, be snapshots.Backend, resuming bool) (*snapshots.Snapshot, error)
	TakeHeldUndo(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, be snapshots.Backend, resuming bool) (*snapshots.Snapshot, error)
}

// undoKernel is what the undos a restore or a reset takes use of the
// kernel and the take: the take of an undo (TakeUndo), and, for ZFS's held copy of the
// stopped guest (undoTaker.TakeHeldUndo, zfsundo.go), the undo's record,
// an operation's steps and tasks, a snapshot's state and its record as
// taken; package seams makes one of the kernel and the take's TakeUndo
// and RecordUndo (Options.Taker).
type undoKernel interface {
	TakeUndo(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, be snapshots.Backend, resuming bool) (*snapshots.Snapshot, error)
	RecordUndo(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, be snapshots.Backend) (*snapshots.Snapshot, error)
	MarkTaken(ctx context.Context, sn *snapshots.Snapshot, t providers.SnapshotTaken, took time.Duration, ev *snapshots.TakenEvent) error
	MoveState(ctx context.Context, q db.DBTX, sn *snapshots.Snapshot, to, errWords string) error
	Step(ctx context.Context, op *snapshots.Operation, step string) error
	TaskRecorder(op *snapshots.Operation) providers.Recorder
}

// undoTaker is the restores' taker: the take's TakeUndo, and the held
// undo of ZFS's order, which only a restore takes.
type undoTaker struct {
	undoKernel
	st      *store.Store
	install string
	now     func() time.Time
}

// templates reads a box template by name, which a reset makes a box fresh
// from; package boxes is one.
type templates interface {
	Template(ctx context.Context, name string) (snapshots.BoxTemplate, error)
}

// Kinds are the restores' kinds of operation, each registered with the
// kernel's engine with its typed parameters and result: Restore restores a
// box to a snapshot and Reset makes a box fresh. The API and the web read
// an operation's result through them (Kinds().Restore.Result(op)).
type Kinds struct {
	Restore *operations.Kind[restoreParams, RestoreResult]
	Reset   *operations.Kind[resetParams, ResetResult]
}

// Options are what the restores are made of: the store, the undo's taker,
// the box templates a reset reads, the clock (nil is time.Now; the core's,
// so an operation's times read as its records') and the logger (nil
// discards).
type Options struct {
	Store     *store.Store
	Deletes   deleter
	Taker     undoKernel
	Templates templates
	Now       func() time.Time
	Logger    *slog.Logger
}

// Resets are the box's resets and the undo of a reset or a restore.
func (s *Restores) Resets() *Resets { return s.resets }

// Kinds are the restores' registered kinds of operation.
func (s *Restores) Kinds() *Kinds { return &s.kinds }

// UsePictures gives the restore package pictures' keeper, which captures
// a restore's undo's picture before its stop; without one, no undo gets a
// picture.
func (s *Restores) UsePictures(p snapshots.PictureKeeper) { s.pictures = p }
