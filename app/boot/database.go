package boot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/app/pgcluster"
	"github.com/boxsnap/boxsnap/providers/local"
)

// databaseName is the embedded cluster's database.
const databaseName = "boxsnap"

// connectTimeout bounds the wait for a database that does not answer.
const connectTimeout = 10 * time.Second

// poolConnections is a process's pool size unless DATABASE_URL sets
// pool_max_conns: 45 serves 20 operations at once with River's own, the
// engine's listener and the web's requests beside them. Several processes on one PostgreSQL add up;
// its default max_connections is 100.
const poolConnections = 45

// Database is an open pool, and the embedded cluster when boxsnap started
// one.
type Database struct {
	Pool    *pgxpool.Pool
	cluster *pgcluster.Cluster
	logger  *slog.Logger
}

// Problem is an error of one line that names the problem and its fix.
type Problem struct {
	What, Fix string
	Err       error
}

func (p *Problem) Error() string {
	if p.Fix == "" {
		return p.What
	}
	return p.What + ": " + p.Fix
}

func (p *Problem) Unwrap() error { return p.Err }

// OpenDatabase opens DATABASE_URL, or starts the embedded cluster in the data
// folder when it is empty. With attach, a cluster that a running serve holds
// in that folder is used as it is (work and doctor beside serve).
func OpenDatabase(ctx context.Context, cfg config.Config, logger *slog.Logger, attach bool) (*Database, error) {
	db := &Database{logger: logger}
	dsn := cfg.DatabaseURL
	if running, ok := pgcluster.RunningDSN(filepath.Join(cfg.DataDir, "postgres"), databaseName); dsn == "" && attach && ok {
		dsn = running
		logger.Info("using the embedded database that a running boxsnap serve holds", "data", cfg.DataDir)
	}
	if dsn == "" {
		if err := checkWritable(cfg.DataDir); err != nil {
			return nil, err
		}
		c, err := pgcluster.Start(ctx, pgcluster.Options{DataDir: filepath.Join(cfg.DataDir, "postgres"), Logger: logger})
		if err != nil {
			return nil, err
		}
		db.cluster = c
		if err := c.EnsureDatabase(ctx, databaseName); err != nil {
			db.Close(ctx)
			return nil, fmt.Errorf("embedded database: %w", err)
		}
		dsn = c.DSN(databaseName)
	}
	pcfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		db.Close(ctx)
		return nil, &Problem{What: "DATABASE_URL is not a PostgreSQL URL", Fix: "use a URL such as postgres://user@host:5432/boxsnap, or unset it to use the embedded default"}
	}
	pcfg.ConnConfig.ConnectTimeout = connectTimeout
	if _, set := pcfg.ConnConfig.RuntimeParams["pool_max_conns"]; !set && !strings.Contains(dsn, "pool_max_conns") {
		// pgxpool's default, max(4, CPUs), would let four running
		// operations take every connection (each holds one for its lock and
		// uses another); River's operation workers are sized to the pool.
		pcfg.MaxConns = poolConnections
	}
	if _, set := pcfg.ConnConfig.RuntimeParams["jit"]; !set {
		// As on the embedded cluster (pgcluster): JIT only slows boxsnap's
		// short queries, and a DATABASE_URL may say otherwise.
		pcfg.ConnConfig.RuntimeParams["jit"] = "off"
	}
	wait := time.Duration(0)
	if cfg.DatabaseURL != "" {
		wait = cfg.DatabaseWait
	}
	pool, err := connectWaiting(ctx, pcfg, wait, logger)
	if err != nil {
		db.Close(ctx)
		if cfg.DatabaseURL != "" {
			return nil, &Problem{What: fmt.Sprintf("the database at %s does not answer (%s)", config.Redact(cfg.DatabaseURL), shortErr(err)),
				Fix: "check that it runs and the URL is right, or unset DATABASE_URL to use the embedded default", Err: err}
		}
		return nil, fmt.Errorf("embedded database: %w", err)
	}
	db.Pool = pool
	return db, nil
}

// connectWaiting opens the pool and pings it; a database not up yet or
// restarting (a refused connection, "the database system is starting up"
// or "shutting down"), as a worker started again beside a restart of
// PostgreSQL finds, is asked again, a log line every few seconds, for wait
// (config's DatabaseWait). A wrong password or a missing database is said
// at once.
func connectWaiting(ctx context.Context, pcfg *pgxpool.Config, wait time.Duration, logger *slog.Logger) (*pgxpool.Pool, error) {
	deadline := time.Now().Add(wait)
	pause, said := 250*time.Millisecond, time.Time{}
	for {
		pool, err := pgxpool.NewWithConfig(ctx, pcfg)
		if err == nil {
			pctx, cancel := context.WithTimeout(ctx, connectTimeout)
			err = pool.Ping(pctx)
			cancel()
			if err == nil {
				return pool, nil
			}
			pool.Close()
		}
		if !notUpYet(err) || time.Now().Add(pause).After(deadline) || ctx.Err() != nil {
			return nil, err
		}
		if time.Since(said) > 5*time.Second {
			logger.Warn("the database does not answer yet; asking again", "until", deadline.Format(time.TimeOnly), "err", shortErr(err))
			said = time.Now()
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(pause):
		}
		pause = min(2*pause, 2*time.Second)
	}
}

// notUpYet says whether a connection's error is a database not up yet or
// restarting, not a refusal of who asks or what.
func notUpYet(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// 57P03 cannot_connect_now (starting up, shutting down, in
		// recovery), 57P01 admin_shutdown, 57P02 crash_shutdown.
		return pe.Code == "57P03" || pe.Code == "57P01" || pe.Code == "57P02"
	}
	var ce *pgconn.ConnectError
	return errors.As(err, &ce) || errors.Is(err, context.DeadlineExceeded)
}

// Close closes the pool and stops the embedded cluster if boxsnap started it.
func (db *Database) Close(ctx context.Context) {
	if db.Pool != nil {
		db.Pool.Close()
	}
	if db.cluster != nil {
		if err := db.cluster.Stop(ctx); err != nil {
			db.logger.Error("stop the embedded database", "err", err)
		}
		db.cluster = nil
	}
}

func checkWritable(dir string) error {
	fix := "choose a folder you can write with --data-dir or BOXSNAP_DATA_DIR"
	// The folders it makes let a box's user pass, not list (local.MakeFolder):
	// its box's folder is below.
	if err := local.MakeFolder(dir); err != nil {
		return &Problem{What: fmt.Sprintf("the data folder %s cannot be made (%s)", dir, shortErr(err)), Fix: fix, Err: err}
	}
	f, err := os.CreateTemp(dir, ".write-check-*")
	if err != nil {
		return &Problem{What: fmt.Sprintf("the data folder %s cannot be written (%s)", dir, shortErr(err)), Fix: fix, Err: err}
	}
	name := f.Name()
	_ = f.Close()
	_ = os.Remove(name)
	return nil
}

// shortErr is an error's innermost words, without Go's wrapping.
func shortErr(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}
