package take_test

import (
	"context"
	"os"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
)

// TestMain runs the tests on the private PostgreSQL dbtest starts.
func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

// admitReady makes a ready snapshot in an env without workers, by running
// the take's operation directly.
func admitReady(t *testing.T, e *coretest.Env, c snapshots.Caller, box, name string) *snapshots.Snapshot {
	t.Helper()
	op, sn, err := e.Take.Take(context.Background(), c, take.TakeRequest{Box: box, Name: name})
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

// runOp runs an operation's job directly, in an env without workers.
func runOp(t *testing.T, e *coretest.Env, op *snapshots.Operation) {
	t.Helper()
	if err := e.Core.RunOperation(context.Background(), op.ID); err != nil {
		t.Fatal(err)
	}
}
