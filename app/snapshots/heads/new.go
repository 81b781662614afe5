package heads

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// kernel is what Heads uses of the core's kernel: the records of boxes and
// snapshots, their locks, and the box log. *snapshots.Kernel (and so
// *snapshots.Service) is one.
type kernel interface {
	Box(ctx context.Context, c snapshots.Caller, ref string) (*snapshots.Box, error)
	BoxByID(ctx context.Context, q db.DBTX, id string) (*snapshots.Box, error)
	SnapshotByID(ctx context.Context, q db.DBTX, id string) (*snapshots.Snapshot, error)
	LockBox(ctx context.Context, tx pgx.Tx, id string) (*snapshots.Box, error)
	SnapshotLock(ctx context.Context, tx db.DBTX, id string) (*snapshots.Snapshot, error)
	Log(ctx context.Context, q db.DBTX, box, kind string, c snapshots.Caller, words, snapshot, op string, data any)
}

// snapshotOps is what Heads uses of the snapshot reads: a snapshot the
// caller may see, by its ID or of a box. *snapshots.Service is one.
type snapshotOps interface {
	Snapshot(ctx context.Context, c snapshots.Caller, id string) (*snapshots.Snapshot, *snapshots.Box, error)
	SnapshotOfBox(ctx context.Context, c snapshots.Caller, boxRef, ref string) (*snapshots.Snapshot, *snapshots.Box, error)
}

// Options configure Heads.
type Options struct {
	// Store is the database Heads reads lineages from and writes a chosen
	// head to.
	Store *store.Store
}

// Heads is the boxes' heads and the snapshots' lineages: a lineage read as
// the caller may see it, a row's "from ‘…’", and a head chosen without a
// restore.
type Heads struct {
	k     kernel
	snaps snapshotOps
	st    *store.Store
}

// New makes Heads on the kernel k and the snapshot reads snaps (both the
// core's *snapshots.Service).
func New(k kernel, snaps snapshotOps, opts Options) (*Heads, error) {
	if k == nil || snaps == nil || opts.Store == nil {
		return nil, errors.New("heads: the kernel, the snapshot reads and a store are required")
	}
	return &Heads{k: k, snaps: snaps, st: opts.Store}, nil
}

// refusal is a refusal in words of words.go.
func refusal(code snapshots.Code, words string) *snapshots.Refusal {
	return &snapshots.Refusal{Code: code, Words: words}
}
