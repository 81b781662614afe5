package approvals_test

import (
	"context"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// runOp runs an admitted operation here, without a worker.
func runOp(t *testing.T, e *coretest.Env, op *snapshots.Operation) {
	t.Helper()
	if err := e.Core.RunOperation(context.Background(), op.ID); err != nil {
		t.Fatal(err)
	}
}
