package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	boxsql "github.com/boxsnap/boxsnap/sql"
)

// MigrationStatus says how far a database's migrations are.
type MigrationStatus struct {
	RiverApplied, RiverPending int
	AppApplied, AppPending     int
}

// Migrate applies River's migrations and then the app's (sql/migrations), in
// one go, and says what it applied on logger. It is safe to run from several
// processes at once: River and goose each take a lock for their run.
func Migrate(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	rm, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: logger})
	if err != nil {
		return fmt.Errorf("river migrator: %w", err)
	}
	res, err := rm.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	if n := len(res.Versions); n > 0 {
		logger.Info("applied River's migrations", "count", n)
	}

	p, closeDB, err := gooseProvider(pool)
	if err != nil {
		return err
	}
	defer closeDB()
	results, err := p.Up(ctx)
	if err != nil {
		return fmt.Errorf("app migrations: %w", err)
	}
	for _, r := range results {
		logger.Info("applied migration", "file", r.Source.Path, "took", r.Duration)
	}
	return nil
}

// Status reports applied and pending migrations without changing anything,
// for the doctor.
func Status(ctx context.Context, pool *pgxpool.Pool) (MigrationStatus, error) {
	var st MigrationStatus
	rm, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return st, fmt.Errorf("river migrator: %w", err)
	}
	res, err := rm.Validate(ctx, nil)
	if err != nil {
		return st, fmt.Errorf("river migrations: %w", err)
	}
	if !res.OK {
		st.RiverPending = len(res.Messages)
	}
	p, closeDB, err := gooseProvider(pool)
	if err != nil {
		return st, err
	}
	defer closeDB()
	statuses, err := p.Status(ctx)
	if err != nil {
		return st, fmt.Errorf("app migrations: %w", err)
	}
	for _, s := range statuses {
		if s.State == goose.StateApplied {
			st.AppApplied++
		} else {
			st.AppPending++
		}
	}
	return st, nil
}

func gooseProvider(pool *pgxpool.Pool) (*goose.Provider, func(), error) {
	migrations, err := fs.Sub(boxsql.Migrations, "migrations")
	if err != nil {
		return nil, nil, fmt.Errorf("app migrations: %w", err)
	}
	db := stdlib.OpenDBFromPool(pool)
	// Each piece of work has its own range of numbers, so a database may
	// hold a later range's migration before an earlier range's lands: those
	// are applied out of order rather than refused.
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations,
		goose.WithTableName("boxsnap_migrations"), goose.WithAllowOutofOrder(true))
	if err != nil {
		_ = db.Close()
		return nil, nil, fmt.Errorf("app migrations: %w", err)
	}
	return p, func() { _ = db.Close() }, nil
}

// ErrNotFound is returned by queries that find no row.
var ErrNotFound = errors.New("not found")
