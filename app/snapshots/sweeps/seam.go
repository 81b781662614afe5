package sweeps

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

// kernel is what the sweeps use of the core's kernel: its settings and
// time zone, the record reads and locks, admission and an operation's end,
// the box log and a snapshot's state; *snapshots.Service is one.
type kernel interface {
	Install() string
	// OwnerFor is the host that owns a box this process makes on a backend.
	OwnerFor(be snapshots.Backend) *string
	Backends() []snapshots.Backend
	Backend(id string) (snapshots.Backend, error)
	Engine() *operations.Engine
	Settings(ctx context.Context) (snapshots.Settings, error)
	TimeZone(ctx context.Context) *time.Location
	BoxByID(ctx context.Context, q db.DBTX, id string) (*snapshots.Box, error)
	LockBox(ctx context.Context, tx pgx.Tx, id string) (*snapshots.Box, error)
	SnapshotByID(ctx context.Context, q db.DBTX, id string) (*snapshots.Snapshot, error)
	SnapshotLock(ctx context.Context, tx db.DBTX, id string) (*snapshots.Snapshot, error)
	SnapshotByRef(ctx context.Context, backend, ref string) (*snapshots.Snapshot, error)
	NamesOfBox(ctx context.Context, q db.DBTX, box string) (map[string]bool, error)
	Pins(ctx context.Context, q db.DBTX, id, except string) ([]snapshots.Pin, error)
	Admit(ctx context.Context, tx pgx.Tx, r snapshots.OpRequest) (*snapshots.Operation, error)
	AdmitThin(ctx context.Context, c snapshots.Caller, b *snapshots.Box, kind string, change snapshots.Change, requestID string,
		choose func(all []*snapshots.Snapshot, pins map[string][]snapshots.Pin, head *string) []string) (*snapshots.Operation, error)
	End(ctx context.Context, op *snapshots.Operation, state, errWords, observed string) error
	TaskRecorder(op *snapshots.Operation) providers.Recorder
	MoveState(ctx context.Context, q db.DBTX, sn *snapshots.Snapshot, to, errWords string) error
	Log(ctx context.Context, q db.DBTX, box, kind string, c snapshots.Caller, words, snapshot, op string, data any)
}

// snaps is the snapshot operations a sweep calls: thinning's delete of one
// snapshot, and the result of the room sweep's delete; package keep's
// Keeps is one.
type snaps interface {
	DeleteWith(ctx context.Context, op *snapshots.Operation, sn *snapshots.Snapshot, b *snapshots.Box, be snapshots.Backend,
		c snapshots.Caller, why string, rec providers.Recorder) error
	DeleteResult(op *snapshots.Operation) (snapshots.DeleteResult, error)
}

// straightener sets a box straight, the last step of a restore made
// outside boxsnap; package restore's Restores is one.
type straightener interface {
	SetStraight(ctx context.Context, opID string, b *snapshots.Box, be snapshots.Backend, after string) error
}

// taker is the take the automatic check calls; package take's Take is one.
type taker interface {
	TakeAutomatic(ctx context.Context, boxID, why string) (*snapshots.Operation, *snapshots.Snapshot, error)
}

// boxes is what thinning and the trash's sweep use of the boxes: a box's
// history settings, and the release of a box whose time in the trash
// ended; *snapshots.Boxes is one.
type boxes interface {
	BoxHistory(ctx context.Context, b *snapshots.Box) (*snapshots.BoxHistory, error)
	EmptyTrash(ctx context.Context, c snapshots.Caller, ref, requestID string) (*snapshots.Operation, error)
}

// Kinds are the sweeps' kinds of operation, each registered with the
// kernel's engine with its typed parameters and result: Thin and
// DeleteHistory delete automatic snapshots (automatic history).
type Kinds struct {
	Thin          *operations.Kind[snapshots.ThinParams, ThinResult]
	DeleteHistory *operations.Kind[snapshots.ThinParams, ThinResult]
}

// Options are what the sweeps are made of. Kernel is the core's service,
// Snaps its keeps, Taker its take, Boxes its boxes, Straight its restores;
// Now and Logger are the core's too, so a sweep reads the same clock as the
// records it compares.
type Options struct {
	Store    *store.Store
	Kernel   kernel
	Snaps    snaps
	Taker    taker
	Boxes    boxes
	Straight straightener
	Logger   *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// RetryKeysKeptFor is how long a retry key answers its first call
	// before housekeeping forgets it; 0 is snapshots.ToolAnswersKeptFor.
	RetryKeysKeptFor time.Duration
	// Host is the host this process runs on: the reconcile leaves another
	// host's local snapshots and boxes to it. Empty: every record is
	// checked here.
	Host string
}

// Sweeps is boxsnap's periodic work: the reconcile, the scan for restores
// made outside boxsnap, the room sweep, the keeps' expiry, automatic
// history's check and thinning, the trash's emptying and housekeeping.
type Sweeps struct {
	st       *store.Store
	k        kernel
	snaps    snaps
	taker    taker
	boxes    boxes
	straight straightener
	ops      *operations.Engine
	backends map[string]snapshots.Backend
	order    []string // the backends' IDs, in order
	install  string
	logger   *slog.Logger
	now      func() time.Time
	kinds    Kinds
	// retryKeysKeptFor is how long housekeeping keeps a retry key.
	retryKeysKeptFor time.Duration
	// host is the host this process runs on (Options.Host).
	host string
}

// New makes the sweeps and registers their kinds of operation with the
// kernel's engine; it is made once per engine, before its workers start.
func New(o Options) (*Sweeps, error) {
	if o.Store == nil || o.Kernel == nil || o.Snaps == nil || o.Taker == nil || o.Boxes == nil || o.Straight == nil {
		return nil, errors.New("sweeps: a store, the kernel, its snapshots, its take, its boxes and its restores are required")
	}
	s := &Sweeps{st: o.Store, k: o.Kernel, snaps: o.Snaps, taker: o.Taker, boxes: o.Boxes, straight: o.Straight, ops: o.Kernel.Engine(),
		backends: map[string]snapshots.Backend{}, install: o.Kernel.Install(), logger: o.Logger, now: o.Now, retryKeysKeptFor: o.RetryKeysKeptFor, host: o.Host}
	if s.retryKeysKeptFor <= 0 {
		s.retryKeysKeptFor = snapshots.ToolAnswersKeptFor
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	for _, b := range o.Kernel.Backends() {
		s.backends[b.ID] = b
		s.order = append(s.order, b.ID)
	}
	s.kinds = Kinds{
		Thin:          operations.Register(s.ops, snapshots.OpThin, s.runThin),
		DeleteHistory: operations.Register(s.ops, snapshots.OpDeleteHistory, s.runThin),
	}
	return s, nil
}

// Kinds are the sweeps' registered kinds of operation.
func (s *Sweeps) Kinds() *Kinds { return &s.kinds }
