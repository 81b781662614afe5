package approvals_test

import (
	"context"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
)

// setSwitches changes the owner's settings as change says.
func setSwitches(t *testing.T, e *coretest.Env, change func(*snapshots.Settings)) {
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

// asked is the request err says the restore asked the person, its words
// saying each of words.
func asked(t *testing.T, err error, words ...string) *approvals.Approval {
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

// runOp runs an admitted operation here, without a worker.
func runOp(t *testing.T, e *coretest.Env, op *snapshots.Operation) {
	t.Helper()
	if err := e.Core.RunOperation(context.Background(), op.ID); err != nil {
		t.Fatal(err)
	}
}
