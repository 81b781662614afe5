package take

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// Take is the take: a person's, an agent's or the CLI's snapshot of a box
// (Take), boxsnap's automatic one (TakeAutomatic), and the run of both
// (its Take kind of operation): the backend's snapshot, the picture before
// it, and the per-box limit after it.
type Take struct {
	k        kernel
	del      deleter
	st       *store.Store
	ops      *operations.Engine
	install  string
	now      func() time.Time
	logger   *slog.Logger
	pictures pictureTaker
	kinds    Kinds
}

// kernel is what the take uses of the core's kernel: the backends, its
// settings and time zone, the plan and the room, the record reads and
// locks, admission and an operation's steps and end, the box log and a
// snapshot's state, and the deletes the per-box limit runs;
// *snapshots.Service is one.
type kernel interface {
	Engine() *operations.Engine
	Install() string
	Backend(id string) (snapshots.Backend, error)
	Box(ctx context.Context, c snapshots.Caller, ref string) (*snapshots.Box, error)
	BoxByID(ctx context.Context, q db.DBTX, id string) (*snapshots.Box, error)
	LockBox(ctx context.Context, tx pgx.Tx, id string) (*snapshots.Box, error)
	SnapshotByID(ctx context.Context, q db.DBTX, id string) (*snapshots.Snapshot, error)
	SnapshotsOfBox(ctx context.Context, q db.DBTX, box string) ([]*snapshots.Snapshot, error)
	NamesOfBox(ctx context.Context, q db.DBTX, box string) (map[string]bool, error)
	Pins(ctx context.Context, q db.DBTX, id, except string) ([]snapshots.Pin, error)
	ExistingRequest(ctx context.Context, q db.DBTX, c snapshots.Caller, requestID string, kind string, target *string) (*snapshots.Operation, error)
	Settings(ctx context.Context) (snapshots.Settings, error)
	ReadSettings(ctx context.Context) (snapshots.Settings, error)
	TimeZone(ctx context.Context) *time.Location
	PlanNow(ctx context.Context, b *snapshots.Box, be snapshots.Backend, ref *providers.SnapshotRef) (providers.SnapshotPlan, error)
	PlanError(b *snapshots.Box, be snapshots.Backend, err error) error
	RoomFor(ctx context.Context, c snapshots.Caller, b *snapshots.Box, be snapshots.Backend, plan providers.SnapshotPlan, st snapshots.Settings, adds *int64) error
	ReserveRoom(ctx context.Context, tx pgx.Tx, c snapshots.Caller, b *snapshots.Box, be snapshots.Backend, plan providers.SnapshotPlan, st snapshots.Settings, adds *int64) (*snapshots.Reserved, error)
	CeilingAdmits(ctx context.Context, tx db.DBTX, c snapshots.Caller, backendID string, charge snapshots.Charge, st snapshots.Settings) error
	Unsettled(ctx context.Context, q db.DBTX, b *snapshots.Box) error
	Admit(ctx context.Context, tx pgx.Tx, r snapshots.OpRequest) (*snapshots.Operation, error)
	Step(ctx context.Context, op *snapshots.Operation, step string) error
	End(ctx context.Context, op *snapshots.Operation, state, errWords, observed string) error
	TaskRecorder(op *snapshots.Operation) providers.Recorder
	MoveState(ctx context.Context, q db.DBTX, sn *snapshots.Snapshot, to, errWords string) error
	MarkTaken(ctx context.Context, sn *snapshots.Snapshot, t providers.SnapshotTaken, took time.Duration, ev *snapshots.TakenEvent) error
	Log(ctx context.Context, q db.DBTX, box, kind string, c snapshots.Caller, words, snapshot, op string, data any)
}

// deleter deletes snapshots within a step of an operation that holds the
// box's turn, a delete cut short finished as the step resumes; package
// keep's Keeps is one (Options.Deletes).
type deleter interface {
	DeleteStep(ctx context.Context, op *snapshots.Operation, sn *snapshots.Snapshot, b *snapshots.Box, be snapshots.Backend, c snapshots.Caller, why string) error
	FinishLeftDeletes(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, be snapshots.Backend, all []*snapshots.Snapshot, mine func(*snapshots.Snapshot) bool, c snapshots.Caller, why string) ([]string, error)
}

// pictureTaker captures a picture of a box's screen just before its take;
// package pictures' Pictures is one (UsePictures).
type pictureTaker interface {
	TakePicture(ctx context.Context, b *snapshots.Box, sn *snapshots.Snapshot)
}

// Kinds are the take's kinds of operation, registered with the kernel's
// engine with their typed parameters and result: Take runs a take, and the
// API and the web read its result through it (Kinds().Take.Result(op)).
type Kinds struct {
	Take *operations.Kind[takeParams, TakeResult]
}

// Options are what the take is made of: the store, the clock (nil is
// time.Now; the core's, so a snapshot's times read as its records') and
// the logger (nil discards).
type Options struct {
	Store   *store.Store
	Deletes deleter
	Now     func() time.Time
	Logger  *slog.Logger
}

// New makes the take on the core k and registers its kind of operation
// with its engine, before River's workers start; app/boot gives the kernel
// it through snapshots.Kernel.UseTaker.
func New(k kernel, opts Options) (*Take, error) {
	if opts.Deletes == nil || k == nil || opts.Store == nil {
		return nil, errors.New("take: the core, a store and the deletes are required")
	}
	s := &Take{k: k, del: opts.Deletes, st: opts.Store, ops: k.Engine(), install: k.Install(), now: opts.Now, logger: opts.Logger}
	if s.now == nil {
		s.now = time.Now
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.kinds = Kinds{
		// A take's run starts with its own statement, which reads its
		// snapshot and its box with the start (TakeStart).
		Take: operations.RegisterStarting(s.ops, snapshots.OpTake, s.startTake, s.runTake),
	}
	return s, nil
}

// Kinds are the take's registered kinds of operation.
func (s *Take) Kinds() *Kinds { return &s.kinds }

// UsePictures gives the take what captures a box's screen before it; without
// it, no snapshot gets a picture.
func (s *Take) UsePictures(p pictureTaker) { s.pictures = p }
