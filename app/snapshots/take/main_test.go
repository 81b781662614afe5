package take_test

import (
	"context"
	"os"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// TestMain runs the tests on the private PostgreSQL dbtest starts.
func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

// runOp runs an operation's job directly, in an env without workers.
func runOp(t *testing.T, e *coretest.Env, op *snapshots.Operation) {
	t.Helper()
	if err := e.Core.RunOperation(context.Background(), op.ID); err != nil {
		t.Fatal(err)
	}
}
