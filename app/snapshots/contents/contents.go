package contents

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// kernel is what Contents uses of the core's kernel: the backends, the
// record reads, the box log, the settings and the time zone, the engine its
// Import operation runs on with that operation's admission and steps, and
// the install's ID. *snapshots.Kernel (and so *snapshots.Service) is one.
type kernel interface {
	Backend(id string) (snapshots.Backend, error)
	Backends() []snapshots.Backend
	Box(ctx context.Context, c snapshots.Caller, ref string) (*snapshots.Box, error)
	BoxByID(ctx context.Context, q db.DBTX, id string) (*snapshots.Box, error)
	SnapshotByID(ctx context.Context, q db.DBTX, id string) (*snapshots.Snapshot, error)
	SnapshotsOfBox(ctx context.Context, q db.DBTX, box string) ([]*snapshots.Snapshot, error)
	NamesOfBox(ctx context.Context, q db.DBTX, box string) (map[string]bool, error)
	Log(ctx context.Context, q db.DBTX, box, kind string, c snapshots.Caller, words, snapshot, op string, data any)
	Settings(ctx context.Context) (snapshots.Settings, error)
	ReadSettings(ctx context.Context) (snapshots.Settings, error)
	Secrets(ctx context.Context) providers.Secrets
	TimeZone(ctx context.Context) *time.Location
	ExistingRequest(ctx context.Context, q db.DBTX, c snapshots.Caller, requestID, kind string, target *string) (*snapshots.Operation, error)
	LockBox(ctx context.Context, tx pgx.Tx, id string) (*snapshots.Box, error)
	Admit(ctx context.Context, tx pgx.Tx, r snapshots.OpRequest) (*snapshots.Operation, error)
	Wait(ctx context.Context, id string) (*snapshots.Operation, error)
	Step(ctx context.Context, op *snapshots.Operation, step string) error
	End(ctx context.Context, op *snapshots.Operation, state, errWords, observed string) error
	Engine() *operations.Engine
	Install() string
	// OwnerFor is the host that owns a box this process makes on a backend.
	OwnerFor(be snapshots.Backend) *string
}

// snapshotOps is what Contents uses of the snapshot operations: a snapshot
// the caller may see, by its ID or of a box, and a box's head put on the
// snapshot an import made the box from. *snapshots.Service is one.
type snapshotOps interface {
	Snapshot(ctx context.Context, c snapshots.Caller, id string) (*snapshots.Snapshot, *snapshots.Box, error)
	SnapshotOfBox(ctx context.Context, c snapshots.Caller, boxRef, ref string) (*snapshots.Snapshot, *snapshots.Box, error)
	SetHead(ctx context.Context, q db.DBTX, box, snapshot string)
}

// Options configure Contents.
type Options struct {
	// Store is the database Contents reads and writes its own rows in
	// (share codes, an import's box and snapshots).
	Store *store.Store
	// Now is the clock; nil means time.Now. It is the kernel's clock.
	Now func() time.Time
	// TempDir holds imports while they are checked; empty: the system's.
	TempDir string
	// Redeem bounds a redeem from another boxsnap; a zero field is
	// DefaultRedeemLimits'.
	Redeem RedeemLimits
	// FetchShared fetches a copy from another boxsnap's share endpoint
	// (remote.FetchShared); nil refuses redeems from another boxsnap.
	FetchShared FetchShared
}

// Contents is the core's look inside snapshots and their moves in and out
// of boxsnap: a snapshot's files browsed, shown, downloaded and compared
// (with the box now or another snapshot), a restore's preview, export
// files written and staged, imports and their operation, share codes made,
// listed, revoked and redeemed, and a redeem from another boxsnap.
type Contents struct {
	k           kernel
	snaps       snapshotOps
	st          *store.Store
	install     string
	now         func() time.Time
	tempDir     string
	compares    compareCache
	redeem      RedeemLimits
	fetchShared FetchShared
	importKind  *operations.Kind[importParams, ImportResult]
}

// refusal is a refusal in words of words.go (or the kernel's).
func refusal(code snapshots.Code, words string) *snapshots.Refusal {
	return &snapshots.Refusal{Code: code, Words: words}
}
