package sweeps_test

import (
	"context"
	"encoding/json"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
)

// TestMain runs the tests on the private PostgreSQL dbtest starts.
func TestMain(m *testing.M) {
	os.Exit(dbtest.Main(m))
}

// fakeClock is the core's clock in these tests (Options.Now).
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *fakeClock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func stateOf(t *testing.T, e *coretest.Env, id string) string {
	t.Helper()
	sn, _, err := e.Core.Snapshot(context.Background(), snapshots.Owner(), id)
	if err != nil {
		return "gone"
	}
	return sn.State
}

func taken(t *testing.T, e *coretest.Env, box, name string) *snapshots.Snapshot {
	t.Helper()
	op, sn, err := e.Take.Take(context.Background(), snapshots.Owner(), take.TakeRequest{Box: box, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("take: %s %s", got.State, coretest.Deref(got.Error))
	}
	sn, _, _ = e.Core.Snapshot(context.Background(), snapshots.Owner(), sn.ID)
	return sn
}

func jsonOf(raw []byte, v any) error { return json.Unmarshal(raw, v) }
