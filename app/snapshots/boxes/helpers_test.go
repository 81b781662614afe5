package boxes_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
)

// admitReady takes snapshot name of box as c and runs its operation here,
// without a worker, failing unless it ends ready.
func admitReady(t *testing.T, e *coretest.Env, c snapshots.Caller, box, name string) *snapshots.Snapshot {
	t.Helper()
	op, sn, err := e.Take.Take(context.Background(), c, taking.TakeRequest{Box: box, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Core.RunOperation(context.Background(), op.ID); err != nil {
		t.Fatal(err)
	}
	sn, _, err = e.Core.Snapshot(context.Background(), snapshots.Owner(), sn.ID)
	if err != nil || sn.State != snapshots.StateReady {
		t.Fatalf("snapshot %v: %v", sn, err)
	}
	return sn
}

// refusedWith fails unless err is a refusal saying each of words.
func refusedWith(t *testing.T, err error, words ...string) {
	t.Helper()
	r, ok := snapshots.AsRefusal(err)
	if !ok {
		t.Fatalf("want a refusal saying %q, got %v", words, err)
	}
	for _, w := range words {
		if !strings.Contains(r.Words, w) {
			t.Fatalf("refusal %q does not say %q", r.Words, w)
		}
	}
}

// deref is *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// take takes a snapshot and waits for it to be ready.
func take(t *testing.T, e *coretest.Env, c snapshots.Caller, box, name string) *snapshots.Snapshot {
	t.Helper()
	op, sn, err := e.Take.Take(context.Background(), c, taking.TakeRequest{Box: box, Name: name})
	if err != nil {
		t.Fatalf("take %s: %v", name, err)
	}
	if got := e.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("take %s ended %s: %s", name, got.State, deref(got.Error))
	}
	sn, _, err = e.Core.Snapshot(context.Background(), snapshots.Owner(), sn.ID)
	if err != nil {
		t.Fatal(err)
	}
	return sn
}

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
		t.Fatalf("restore %s ended %s: %s (%s)", snap, op.State, deref(op.Error), deref(op.Observed))
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
