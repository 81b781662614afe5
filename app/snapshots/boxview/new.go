package boxview

import (
	"context"
	"log/slog"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// kernel is what the views read of the kernel: a box as the caller may
// see it, its records, the settings, and the configured backends. The
// core's *snapshots.Service is one.
type kernel interface {
	Box(ctx context.Context, c snapshots.Caller, ref string) (*snapshots.Box, error)
	BoxByID(ctx context.Context, q db.DBTX, id string) (*snapshots.Box, error)
	SnapshotsOfBox(ctx context.Context, q db.DBTX, box string) ([]*snapshots.Snapshot, error)
	AllPins(ctx context.Context, q db.DBTX) (map[string][]snapshots.Pin, error)
	TrashRow(ctx context.Context, q db.DBTX, boxID string) (*snapshots.TrashRow, error)
	Settings(ctx context.Context) (snapshots.Settings, error)
	Backend(id string) (snapshots.Backend, error)
	BackendOf(b *snapshots.Box) (snapshots.Backend, bool)
	Engine() *operations.Engine
}

// Views reads a box's page's view and the backends' automatic history
// counts. It holds the kernel it reads through, the store for the reads
// of its own (the box log, the history settings, the operation running on
// a box), the operations' engine and the logger.
type Views struct {
	kernel
	st     *store.Store
	ops    *operations.Engine
	logger *slog.Logger
}

// Options are what Views is made of besides the kernel: the store and
// the logger (nil: slog's default).
type Options struct {
	Store  *store.Store
	Logger *slog.Logger
}

// New makes the views over the kernel k.
func New(k kernel, opts Options) *Views {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return &Views{kernel: k, st: opts.Store, ops: k.Engine(), logger: logger}
}
