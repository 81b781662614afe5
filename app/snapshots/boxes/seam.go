package boxes

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/jackc/pgx/v5"
)

// Boxes is the boxes and threads: acquiring and listing boxes (and the
// Machines tab's pages of them), their presence, status and log, the trash
// and a box's release, held copies; and, through the types it embeds,
// threads (ThreadKeeper), templates (TemplateKeeper), forgetting a backend
// (Forgetting) and automatic history's settings (HistorySettings).
type Boxes struct {
	k      kernel
	del    deleter
	st     *store.Store
	now    func() time.Time
	logger *slog.Logger
	kinds  Kinds
	// Its other seams, each a type of its own with the fields it uses;
	// their methods are the Boxes', so what asks the boxes for them
	// reaches them through *Boxes.
	backends
	*ThreadKeeper
	*TemplateKeeper
	*Forgetting
	*HistorySettings
}

// backends answers the kernel's configured backends, for the seams of
// this package that name them.
type backends struct{ k kernel }

// ThreadKeeper is the threads: made, read by their token or ID, listed, and
// their titles. Boxes embeds it.
type ThreadKeeper struct {
	k  kernel
	st *store.Store
}

// TemplateKeeper is the box templates: checked, listed, read, saved and
// removed. Boxes embeds it.
type TemplateKeeper struct {
	backends
	st *store.Store
}

// Forgetting is forgetting a backend gone from the settings: the backends
// gone, the plan of what forgetting one lets go, and the forgetting.
// Boxes embeds it.
type Forgetting struct {
	backends
	st *store.Store
}

// HistorySettings is a box's settings of automatic history, read and
// changed. Boxes embeds it.
type HistorySettings struct {
	k  kernel
	st *store.Store
}

// kernel is what the boxes use of the core's kernel: the backends and the
// install, the record reads and locks, the guard, admission and an
// operation's steps and end, the box log, and the snapshot operations a
// release and a restore from the trash run (a delete, a final or undo
// snapshot, a guest's release, and the recorder a guest's stop and start
// leave their tasks with); package seams makes one of *snapshots.Service
// and the take's TakeUndo.
type kernel interface {
	Engine() *operations.Engine
	Install() string
	// OwnerFor is the host that owns a box this process makes on a backend.
	OwnerFor(be snapshots.Backend) *string
	Backends() []snapshots.Backend
	Admit(ctx context.Context, tx pgx.Tx, r snapshots.OpRequest) (*snapshots.Operation, error)
	Backend(id string) (snapshots.Backend, error)
	BackendOf(b *snapshots.Box) (snapshots.Backend, bool)
	Box(ctx context.Context, c snapshots.Caller, ref string) (*snapshots.Box, error)
	BoxByID(ctx context.Context, q db.DBTX, id string) (*snapshots.Box, error)
	BoxByName(ctx context.Context, name string) (*snapshots.Box, error)
	ExistingRequest(ctx context.Context, q db.DBTX, c snapshots.Caller, requestID string, kind string, target *string) (*snapshots.Operation, error)
	End(ctx context.Context, op *snapshots.Operation, state, errWords, observed string) error
	LockBox(ctx context.Context, tx pgx.Tx, id string) (*snapshots.Box, error)
	Log(ctx context.Context, q db.DBTX, box string, kind string, c snapshots.Caller, words string, snapshot string, op string, data any)
	PlanNow(ctx context.Context, b *snapshots.Box, be snapshots.Backend, ref *providers.SnapshotRef) (providers.SnapshotPlan, error)
	ReleaseGuest(ctx context.Context, be snapshots.Backend, g providers.Guest, rec providers.Recorder) error
	Repeated(ctx context.Context, c snapshots.Caller, requestID string, kind string, boxRef string, snapRef string) (*snapshots.Operation, error)
	RunningOn(ctx context.Context, b *snapshots.Box) (*snapshots.Operation, error)
	Settings(ctx context.Context) (snapshots.Settings, error)
	SnapshotByID(ctx context.Context, q db.DBTX, id string) (*snapshots.Snapshot, error)
	SnapshotsOfBox(ctx context.Context, q db.DBTX, box string) ([]*snapshots.Snapshot, error)
	Step(ctx context.Context, op *snapshots.Operation, step string) error
	TakeUndo(ctx context.Context, op *snapshots.Operation, b *snapshots.Box, be snapshots.Backend, resuming bool) (*snapshots.Snapshot, error)
	TaskRecorder(op *snapshots.Operation) providers.Recorder
	Thread(ctx context.Context, id string) (*snapshots.Thread, error)
	TimeZone(ctx context.Context) *time.Location
	TrashRow(ctx context.Context, q db.DBTX, boxID string) (*snapshots.TrashRow, error)
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

// errReleaseChecked ends a release's dry transaction once every check has
// passed, so that it rolls back having changed nothing.
var errReleaseChecked = errors.New("the release's checks passed")

// releaseParams are a release's parameters on its operation.
type releaseParams struct {
	// DeleteKept is the person's "Release and delete it": each kept snapshot
	// not yet copied stops being kept, at the person's word, and goes with
	// the box; held copies made already stay kept.
	DeleteKept bool `json:"deleteKept,omitempty"`
	// Trash moves the box to the trash instead (trash.go); Empty releases a
	// box in the trash.
	Trash bool `json:"trash,omitempty"`
	Empty bool `json:"empty,omitempty"`
	// dryRun checks everything the release would check, in its
	// transaction, and rolls it back having admitted nothing
	// (ReleaseChecks); it is never recorded on an operation.
	dryRun bool
}

// Kinds are the boxes' kinds of operation, each registered with the
// kernel's engine with its typed parameters and result: Release releases a
// box (or moves it to the trash, or empties it from there) and Untrash
// restores a box from the trash. The API and the web read an operation's
// result through them (Kinds().Release.Result(op)).
type Kinds struct {
	Release *operations.Kind[releaseParams, ReleaseResult]
	Untrash *operations.Kind[struct{}, UntrashResult]
}

// Options are what the boxes are made of: the store, the clock (nil is
// time.Now; the core's, so a box's times read as its records') and the
// logger (nil discards).
type Options struct {
	Store   *store.Store
	Deletes deleter
	Now     func() time.Time
	Logger  *slog.Logger
}

// New makes the boxes on the core k and registers their kinds of operation
// with its engine, before River's workers start; app/boot gives the kernel
// them through snapshots.Kernel.UseBoxes.
func New(k kernel, opts Options) (*Boxes, error) {
	if opts.Deletes == nil || k == nil || opts.Store == nil {
		return nil, errors.New("boxes: the core, a store and the deletes are required")
	}
	s := &Boxes{k: k, del: opts.Deletes, st: opts.Store, now: opts.Now, logger: opts.Logger, backends: backends{k},
		ThreadKeeper: &ThreadKeeper{k: k, st: opts.Store}, TemplateKeeper: &TemplateKeeper{backends: backends{k}, st: opts.Store},
		Forgetting: &Forgetting{backends: backends{k}, st: opts.Store}, HistorySettings: &HistorySettings{k: k, st: opts.Store}}
	if s.now == nil {
		s.now = time.Now
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	e := k.Engine()
	s.kinds = Kinds{
		Release: operations.Register(e, snapshots.OpRelease, s.runRelease),
		Untrash: operations.Register(e, snapshots.OpUntrash, s.runUntrash),
	}
	return s, nil
}

// Kinds are the boxes' registered kinds of operation.
func (s *Boxes) Kinds() *Kinds { return &s.kinds }

// copyFailedError is a held copy that could not be made: the release stops
// with its words, since a keep is confirmed only when it will last.
type copyFailedError struct{ words string }

func (e *copyFailedError) Error() string { return e.words }

// order is the configured backends' IDs, in ID order.
func (s backends) order() []string {
	var ids []string
	for _, b := range s.k.Backends() {
		ids = append(ids, b.ID)
	}
	return ids
}

// configured tells whether a backend of that ID is in settings.
func (s backends) configured(id string) (snapshots.Backend, bool) {
	for _, b := range s.k.Backends() {
		if b.ID == id {
			return b, true
		}
	}
	return snapshots.Backend{}, false
}
