package fork

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

// Forks is the fork: a new box made from a snapshot of another, armed,
// started and checked before it is ready.
type Forks struct {
	k       kernel
	st      *store.Store
	install string
	// maxCount is the most boxes one fork call makes (ForkMany).
	maxCount int
	now      func() time.Time
	logger   *slog.Logger
	kinds    Kinds
	// taker takes the snapshot a fork of the box now starts from
	// (UseTaker); nil until app/snapshots/seams gives it.
	taker taker
	// host is the host this process runs on, where a fork asked here
	// lands; empty: the source box's own host.
	host string
	// carrier gives the environment a fork's source box runs with, as
	// the database recorded it (UseCarrier); nil until app/snapshots/seams
	// gives it.
	carrier carrier
}

// kernel is what a fork uses of the core: the backends, the record reads
// and locks, the rules a fork's snapshot must pass now, admission and an
// operation's steps and end, the box log, the owner's time zone and the
// secrets a new box's identity carries, and the head a new box starts on;
// *snapshots.Service is one.
type kernel interface {
	Engine() *operations.Engine
	Install() string
	// OwnerFor is the host that owns a box this process makes on a backend.
	OwnerFor(be snapshots.Backend) *string
	Admit(ctx context.Context, tx pgx.Tx, r snapshots.OpRequest) (*snapshots.Operation, error)
	Backend(id string) (snapshots.Backend, error)
	BoxByID(ctx context.Context, q db.DBTX, id string) (*snapshots.Box, error)
	BoxByName(ctx context.Context, name string) (*snapshots.Box, error)
	ChangeNow(ctx context.Context, tx pgx.Tx, boxID, snapID, ref string, change snapshots.Change) (*snapshots.Box, *snapshots.Snapshot, error)
	ExistingRequest(ctx context.Context, q db.DBTX, c snapshots.Caller, requestID, kind string, target *string) (*snapshots.Operation, error)
	End(ctx context.Context, op *snapshots.Operation, state, errWords, observed string) error
	Log(ctx context.Context, q db.DBTX, box, kind string, c snapshots.Caller, words, snapshot, op string, data any)
	PlanError(b *snapshots.Box, be snapshots.Backend, err error) error
	PlanNow(ctx context.Context, b *snapshots.Box, be snapshots.Backend, ref *providers.SnapshotRef) (providers.SnapshotPlan, error)
	Plan(ctx context.Context, c snapshots.Caller, boxRef, ref string) (*snapshots.Box, *snapshots.Snapshot, providers.SnapshotPlan, error)
	Repeated(ctx context.Context, c snapshots.Caller, requestID, kind, boxRef, snapRef string) (*snapshots.Operation, error)
	Secrets(ctx context.Context) providers.Secrets
	SetHead(ctx context.Context, q db.DBTX, box, snapshot string)
	SnapshotByID(ctx context.Context, q db.DBTX, id string) (*snapshots.Snapshot, error)
	SnapshotOfBox(ctx context.Context, c snapshots.Caller, boxRef, ref string) (*snapshots.Snapshot, *snapshots.Box, error)
	Step(ctx context.Context, op *snapshots.Operation, step string) error
	TaskRecorder(op *snapshots.Operation) providers.Recorder
	TimeZone(ctx context.Context) *time.Location
	Unsettled(ctx context.Context, q db.DBTX, b *snapshots.Box) error
}

// taker takes the snapshot a fork of the box now starts from; package
// take's Take is one, through app/snapshots/seams, as this package never
// imports another seam.
type taker interface {
	TakeForFork(ctx context.Context, c snapshots.Caller, box, name, requestID string) (*snapshots.Operation, error)
}

// UseTaker gives the forks the take a fork of the box now starts from.
func (s *Forks) UseTaker(t taker) { s.taker = t }

// carrier gives the environment a box runs with on a host that holds no
// record of it, as the database recorded it when the box was made or
// reset (which no snapshot records), so a fork asked on another host than
// its source box's runs with its source's environment, as a moved box
// does; package hosts' CarriedEnv is it, through app/snapshots/seams. Its
// errors never carry the environment.
type carrier interface {
	CarriedEnv(ctx context.Context, b *snapshots.Box) (map[string]string, error)
}

// UseCarrier gives the forks the environment their source boxes run with.
func (s *Forks) UseCarrier(c carrier) { s.carrier = c }

// errNoTaker is a fork of the box now asked of forks given no take.
var errNoTaker = errors.New("fork: a fork of the box now needs the take (UseTaker)")

// DefaultMaxCount is the most boxes one fork call makes when the setting
// (BOXSNAP_FORK_MAX_COUNT) says no other number.
const DefaultMaxCount = 10

// ForkParams are a fork's parameters on its operation: the new box's name
// and ID, fixed at admission, and its thread.
type ForkParams struct {
	// RunsOn is the host the fork runs on, where its new box lands: the
	// host it was asked on, when a host owns the source box.
	operations.RunsOn
	Name   string  `json:"name"`
	BoxID  string  `json:"boxId"`
	Thread *string `json:"thread,omitempty"`
}

// ForkResult is what a finished fork answers.
type ForkResult struct {
	Box  string `json:"box"`
	Name string `json:"name"`
	From string `json:"from"` // "forked from amber-fox at 10:42"
}

// Kinds are the fork's kinds of operation, registered with the kernel's
// engine with their typed parameters and result; the API and the web read
// a fork's result through them (Kinds().Fork.Result(op)).
type Kinds struct {
	Fork *operations.Kind[ForkParams, ForkResult]
}

// Options are what the forks are made of: the store, the clock (nil is
// time.Now; the core's, so a fork's times read as its records'), the
// logger (nil discards) and the most boxes one call makes.
type Options struct {
	Store  *store.Store
	Now    func() time.Time
	Logger *slog.Logger
	// MaxCount is the most boxes one fork call makes; 0 is
	// DefaultMaxCount.
	MaxCount int
	// Host is the host this process runs on: a fork asked here of a box
	// another host owns makes its new box here (another.go); empty forks
	// on the source box's host only.
	Host string
}

// New makes the forks on the core k and registers their kind of operation
// with its engine, before River's workers start.
func New(k kernel, opts Options) (*Forks, error) {
	if k == nil || opts.Store == nil {
		return nil, errors.New("fork: the core and a store are required")
	}
	s := &Forks{k: k, st: opts.Store, install: k.Install(), host: opts.Host, now: opts.Now, logger: opts.Logger, maxCount: opts.MaxCount}
	if s.maxCount <= 0 {
		s.maxCount = DefaultMaxCount
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.kinds = Kinds{Fork: operations.Register(k.Engine(), snapshots.OpFork, s.runFork)}
	return s, nil
}

// Kinds are the fork's registered kinds of operation.
func (s *Forks) Kinds() *Kinds { return &s.kinds }
