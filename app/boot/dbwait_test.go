package boot_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/boot"
	"github.com/boxsnap/boxsnap/app/pgcluster"
)

// TestAStartWaitsForARestartingDatabase: a process started while its
// DATABASE_URL's PostgreSQL is down (a worker started again beside a
// restart of PostgreSQL) waits for it and opens it once it is up, instead
// of ending "does not answer"; past BOXSNAP_DATABASE_WAIT it ends so.
func TestAStartWaitsForARestartingDatabase(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("the test's PostgreSQL cluster runs as root's postgres user only")
	}
	ctx := context.Background()
	opts := pgcluster.Options{DataDir: filepath.Join(t.TempDir(), "pg"), Port: 5491}
	c, err := pgcluster.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	dsn := c.DSN("postgres")
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	t.Run("too short a wait", func(t *testing.T) {
		cfg := testConfig(t, map[string]string{"DATABASE_URL": dsn, "BOXSNAP_DATABASE_WAIT": "1s"})
		if db, err := boot.OpenDatabase(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), false); err == nil {
			db.Close(ctx)
			t.Fatal("a database that is down opened")
		}
	})
	cfg := testConfig(t, map[string]string{"DATABASE_URL": dsn, "BOXSNAP_DATABASE_WAIT": "1m"})
	opened := make(chan error, 1)
	start := time.Now()
	go func() {
		db, err := boot.OpenDatabase(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), false)
		if err == nil {
			db.Close(ctx)
		}
		opened <- err
	}()
	time.Sleep(2 * time.Second)
	c, err = pgcluster.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(ctx)
	select {
	case err := <-opened:
		if err != nil {
			t.Fatalf("the start did not wait for the database: %v (after %s)", err, time.Since(start).Round(time.Millisecond))
		}
	case <-time.After(time.Minute):
		t.Fatal("the start still waits a minute after the database came up")
	}
}
