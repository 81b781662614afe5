package keep

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

// Keeps are the changes to a snapshot that keep its bytes or let them go:
// Keep, Unkeep and Renew, Delete and the expiry's delete (with DeleteWith,
// DeleteStep and FinishLeftDeletes, which the other seams' steps run), the
// edits of its name and note (Rename, SetNote), an automatic snapshot's
// save and unsave (Save, Unsave), and a box's Delete history, whose
// operation the sweeps' thinning runs.
type Keeps struct {
	k      kernel
	st     *store.Store
	ops    *operations.Engine
	now    func() time.Time
	logger *slog.Logger
	kinds  Kinds
}

// kernel is what the keeps use of the core's kernel: the backends and the
// settings, the record reads and locks, admission, an operation's steps
// and end, the box log, a snapshot's state, the ceiling and the release of
// an earlier guest; *snapshots.Service is one.
type kernel interface {
	Engine() *operations.Engine
	Backend(id string) (snapshots.Backend, error)
	BoxByID(ctx context.Context, q db.DBTX, id string) (*snapshots.Box, error)
	Box(ctx context.Context, c snapshots.Caller, ref string) (*snapshots.Box, error)
	Snapshot(ctx context.Context, c snapshots.Caller, id string) (*snapshots.Snapshot, *snapshots.Box, error)
	SnapshotOfBox(ctx context.Context, c snapshots.Caller, boxRef, ref string) (*snapshots.Snapshot, *snapshots.Box, error)
	SnapshotByID(ctx context.Context, q db.DBTX, id string) (*snapshots.Snapshot, error)
	SnapshotsOfBox(ctx context.Context, q db.DBTX, box string) ([]*snapshots.Snapshot, error)
	NamesOfBox(ctx context.Context, q db.DBTX, box string) (map[string]bool, error)
	Pins(ctx context.Context, q db.DBTX, id, except string) ([]snapshots.Pin, error)
	Repeated(ctx context.Context, c snapshots.Caller, requestID, kind, boxRef, snapRef string) (*snapshots.Operation, error)
	ExistingRequest(ctx context.Context, q db.DBTX, c snapshots.Caller, requestID, kind string, target *string) (*snapshots.Operation, error)
	Settings(ctx context.Context) (snapshots.Settings, error)
	TimeZone(ctx context.Context) *time.Location
	ChangeNow(ctx context.Context, tx pgx.Tx, boxID, snapID, ref string, change snapshots.Change) (*snapshots.Box, *snapshots.Snapshot, error)
	CeilingAdmits(ctx context.Context, tx db.DBTX, c snapshots.Caller, backend string, adds snapshots.Charge, settings snapshots.Settings) error
	Admit(ctx context.Context, tx pgx.Tx, r snapshots.OpRequest) (*snapshots.Operation, error)
	AdmitThin(ctx context.Context, c snapshots.Caller, b *snapshots.Box, kind string, change snapshots.Change, requestID string,
		choose func(all []*snapshots.Snapshot, pins map[string][]snapshots.Pin, head *string) []string) (*snapshots.Operation, error)
	Step(ctx context.Context, op *snapshots.Operation, step string) error
	End(ctx context.Context, op *snapshots.Operation, state, errWords, observed string) error
	TaskRecorder(op *snapshots.Operation) providers.Recorder
	MoveState(ctx context.Context, q db.DBTX, sn *snapshots.Snapshot, to, errWords string) error
	Log(ctx context.Context, q db.DBTX, box, kind string, c snapshots.Caller, words, snapshot, op string, data any)
	ReleaseGuest(ctx context.Context, be snapshots.Backend, g providers.Guest, rec providers.Recorder) error
}

// Kinds are the keeps' kinds of operation, registered with the kernel's
// engine with their typed parameters and result: the API and the web read
// a delete's or a keep's result through them (Kinds().Delete.Result(op)).
type Kinds struct {
	Delete *operations.Kind[snapshots.DeleteParams, snapshots.DeleteResult]
	Expiry *operations.Kind[snapshots.DeleteParams, snapshots.DeleteResult]
	Keep   *operations.Kind[keepParams, snapshots.KeepResult]
	Unkeep *operations.Kind[keepParams, snapshots.KeepResult]
}

// Options are what the keeps are made of: the store, the clock (nil is
// time.Now; the core's, so a keep date reads as its records') and the
// logger (nil discards).
type Options struct {
	Store  *store.Store
	Now    func() time.Time
	Logger *slog.Logger
}

// New makes the keeps on the core k and registers their kinds of operation
// with its engine, before River's workers start.
func New(k kernel, opts Options) (*Keeps, error) {
	if k == nil || opts.Store == nil {
		return nil, errors.New("keep: the core and a store are required")
	}
	s := &Keeps{k: k, st: opts.Store, ops: k.Engine(), now: opts.Now, logger: opts.Logger}
	if s.now == nil {
		s.now = time.Now
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.kinds = Kinds{
		Delete: operations.Register(s.ops, snapshots.OpDelete, s.runDelete),
		Expiry: operations.Register(s.ops, snapshots.OpExpiry, s.runDelete),
		Keep:   operations.Register(s.ops, snapshots.OpKeep, s.runKeep),
		Unkeep: operations.Register(s.ops, snapshots.OpUnkeep, s.runKeep),
	}
	return s, nil
}

// Kinds are the keeps' registered kinds of operation.
func (s *Keeps) Kinds() *Kinds { return &s.kinds }

// DeleteResult reads what a finished delete answered, for the room sweep,
// which admits its deletes itself.
func (s *Keeps) DeleteResult(op *snapshots.Operation) (snapshots.DeleteResult, error) {
	return s.kinds.Delete.Result(op)
}
