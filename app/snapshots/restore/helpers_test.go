package restore_test

import (
	"context"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// admitReady takes a snapshot of box and runs its operation in place (an
// env with no workers), answering it ready.
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

// take takes a snapshot of box and waits for it, answering it as it is
// then.
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

// refusedWith fails t unless err is a refusal that says each of words.
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

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
