package boot

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/boxsnap/boxsnap/app/auth"
	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/hosts"
	"github.com/boxsnap/boxsnap/app/store"
)

// base is what the process builds on its database: the store, sign-in, the
// install's ID, the configured backends and the kernel over them.
type base struct {
	st      *store.Store
	auth    *auth.Service
	install string
	bes     []snapshots.Backend
	core    *snapshots.Service
	// tmp is the data folder's own temporary folder, for imports.
	tmp string
	// contentSweep frees the content store's objects nothing names; nil
	// with no content store.
	contentSweep func(context.Context) (int, error)
}

// newBase migrates the database, then makes the store, sign-in, the
// backends and the kernel.
func newBase(ctx context.Context, cfg config.Config, db *Database, logger *slog.Logger) (*base, error) {
	if err := store.Migrate(ctx, db.Pool, logger); err != nil {
		return nil, err
	}
	st := store.New(db.Pool)
	authSvc := auth.New(st, logger)
	install, err := authSvc.InstallID(ctx)
	if err != nil {
		return nil, err
	}
	remote, contentSweep, err := contentStore(cfg, db.Pool)
	if err != nil {
		return nil, err
	}
	bes, err := backends(cfg, install, logger, remote, hosts.MayFetch(st, LocalBackendID))
	if err != nil {
		return nil, err
	}
	// Imports are checked in the data folder, beside the snapshots they
	// become, rather than in a /tmp that may be small or in memory.
	tmp := filepath.Join(cfg.DataDir, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, fmt.Errorf("make %s: %w", tmp, err)
	}
	svc, err := snapshots.New(snapshots.Options{Store: st, Backends: bes, Install: install, Host: cfg.Host, Logger: logger})
	if err != nil {
		return nil, err
	}
	return &base{st: st, auth: authSvc, install: install, bes: bes, core: svc, tmp: tmp, contentSweep: contentSweep}, nil
}
