package hosts_test

import (
	"context"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/providers/local"
)

// TestMain runs the tests on the private PostgreSQL dbtest starts.
func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

// hostEnv starts a core on pool as the host named host, with a data folder
// of its own: two of them on one pool are two hosts sharing one database.
// now is its clock (nil: time.Now).
func hostEnv(t *testing.T, pool *pgxpool.Pool, host string, workers bool, now func() time.Time) *coretest.Env {
	t.Helper()
	root := t.TempDir()
	if err := local.Passable(root, os.TempDir()); err != nil {
		t.Fatal(err)
	}
	e, err := coretest.Build(context.Background(), pool, coretest.Options{Host: host, LocalRoot: root, NoWorkers: !workers, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Stop)
	return e
}

// clock is a test's clock that moves only when told.
type clock struct{ at atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.at.Store(time.Now().UnixNano())
	return c
}

func (c *clock) now() time.Time          { return time.Unix(0, c.at.Load()) }
func (c *clock) forward(d time.Duration) { c.at.Add(int64(d)) }

// ownerOf is the host that owns the box named name, "" for none.
func ownerOf(t *testing.T, pool *pgxpool.Pool, name string) string {
	t.Helper()
	var owner *string
	if err := pool.QueryRow(context.Background(), "SELECT owner_host FROM boxes WHERE name = $1 AND state <> 'released'", name).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	if owner == nil {
		return ""
	}
	return *owner
}
