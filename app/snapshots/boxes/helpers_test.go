package boxes_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

func names(t *testing.T, e *coretest.Env, box string) map[string]*snapshots.Snapshot {
	t.Helper()
	list, err := e.Core.List(context.Background(), snapshots.Owner(), snapshots.ListQuery{Box: box})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*snapshots.Snapshot{}
	for _, s := range list[0].Snapshots {
		out[s.Name] = s
	}
	return out
}

func restoreTo(t *testing.T, e *coretest.Env, c snapshots.Caller, box, snap string) *snapshots.Operation {
	t.Helper()
	op, err := e.Restores.Restore(context.Background(), c, snapshots.RestoreRequest{Box: box, Snapshot: snap, Replace: true})
	if err != nil {
		t.Fatalf("restore %s: %v", snap, err)
	}
	op = e.Wait(t, op)
	if op.State != snapshots.OpDone {
		t.Fatalf("restore %s ended %s: %s (%s)", snap, op.State, coretest.Deref(op.Error), coretest.Deref(op.Observed))
	}
	return op
}

func stateOf(t *testing.T, e *coretest.Env, id string) string {
	t.Helper()
	sn, _, err := e.Core.Snapshot(context.Background(), snapshots.Owner(), id)
	if err != nil {
		return "gone"
	}
	return sn.State
}

// keys is the names of m.
func keys(m map[string]*snapshots.Snapshot) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// fakeClock is the core's clock in these tests (Options.Now).
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *fakeClock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }
