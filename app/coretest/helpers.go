package coretest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
)

// TakeReady takes a snapshot of box as c and waits for its operation to
// end done, answering the snapshot as it is then (ready).
func (e *Env) TakeReady(t testing.TB, c snapshots.Caller, box, name string) *snapshots.Snapshot {
	t.Helper()
	op, sn, err := e.Take.Take(context.Background(), c, take.TakeRequest{Box: box, Name: name})
	if err != nil {
		t.Fatalf("take %s: %v", name, err)
	}
	if got := e.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("take %s ended %s: %s", name, got.State, Deref(got.Error))
	}
	return e.readySnapshot(t, sn.ID)
}

// AdmitReady takes a snapshot of box as c and runs its operation in place,
// for an env with no workers, answering the snapshot ready.
func (e *Env) AdmitReady(t testing.TB, c snapshots.Caller, box, name string) *snapshots.Snapshot {
	t.Helper()
	op, sn, err := e.Take.Take(context.Background(), c, take.TakeRequest{Box: box, Name: name})
	if err != nil {
		t.Fatalf("take %s: %v", name, err)
	}
	if err := e.Core.RunOperation(context.Background(), op.ID); err != nil {
		t.Fatalf("run the take of %s: %v", name, err)
	}
	return e.readySnapshot(t, sn.ID)
}

// readySnapshot reads the snapshot id as the person sees it and fails t
// unless it is ready.
func (e *Env) readySnapshot(t testing.TB, id string) *snapshots.Snapshot {
	t.Helper()
	sn, _, err := e.Core.Snapshot(context.Background(), snapshots.Owner(), id)
	if err != nil {
		t.Fatalf("read snapshot %s: %v", id, err)
	}
	if sn.State != snapshots.StateReady {
		t.Fatalf("snapshot %s is %s, not ready", sn.Name, sn.State)
	}
	return sn
}

// RefusedWith fails t unless err is a refusal that says each of words.
func RefusedWith(t testing.TB, err error, words ...string) {
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

// Deref is *s, or "" for nil.
func Deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// StateOf is the state of snapshot id as the person sees it, or "gone"
// when it cannot be read.
func (e *Env) StateOf(id string) string {
	sn, _, err := e.Core.Snapshot(context.Background(), snapshots.Owner(), id)
	if err != nil {
		return "gone"
	}
	return sn.State
}

// Clock is a clock a test sets and moves, for Options.Now (its Now).
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock is a clock that reads start until it is advanced.
func NewClock(start time.Time) *Clock { return &Clock{t: start} }

// Now is the clock's time.
func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// SetSettings changes the owner's settings as change says, and saves them.
func (e *Env) SetSettings(t testing.TB, change func(*snapshots.Settings)) {
	t.Helper()
	ctx := context.Background()
	st, err := e.Core.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	change(&st)
	if err := e.Core.SaveSettings(ctx, snapshots.Owner(), st); err != nil {
		t.Fatal(err)
	}
}

// Asked is the request err says a restore asked the person for, its words
// saying each of words; t fails if err is no such request.
func Asked(t testing.TB, err error, words ...string) *approvals.Approval {
	t.Helper()
	a, ok := approvals.AsAsked(err)
	if !ok {
		t.Fatalf("want a request for the person's word, got %v", err)
	}
	for _, w := range words {
		if !strings.Contains(a.Words, w) {
			t.Fatalf("the tool answered %q, not %q", a.Words, w)
		}
	}
	return a.Approval
}
