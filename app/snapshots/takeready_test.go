package snapshots_test

import (
	"context"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// takeReady takes a snapshot of box and waits for its operation to end
// done.
func takeReady(t *testing.T, e *coretest.Env, c snapshots.Caller, box, name string) *snapshots.Snapshot {
	t.Helper()
	op, sn, err := e.Take.Take(context.Background(), c, taking.TakeRequest{Box: box, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("take %s: %s %s", name, got.State, deref(got.Error))
	}
	return sn
}
