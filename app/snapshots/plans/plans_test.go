package plans_test

import (
	"context"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/plans"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
)

// TestDeletePlanIsTheDialogs: a delete's dry run of a kept snapshot says
// the Delete dialog's words, "You kept it until …" among them, and deletes
// nothing; an agent's dry run of the person's snapshot refuses in the
// words the real delete refuses in.
func TestDeletePlanIsTheDialogs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{})
	p := plans.New(e.Core, e.Restores, e.Restores.Resets(), nil)
	owner := snapshots.Owner()
	b := e.Box(t, owner, "amber-fox")
	op, sn, err := e.Take.Take(ctx, owner, take.TakeRequest{Box: b.Name, Name: "before the migration"})
	if err != nil {
		t.Fatal(err)
	}
	e.Wait(t, op)
	if op, err = e.Keeps.Keep(ctx, owner, snapshots.KeepRequest{Box: b.Name, Snapshot: sn.ID, Days: 30}); err != nil {
		t.Fatal(err)
	}
	e.Wait(t, op)

	d, err := p.Delete(ctx, owner, snapshots.DeleteRequest{Box: b.Name, Snapshot: "before the migration"})
	if err != nil {
		t.Fatal(err)
	}
	kept, _, err := e.Core.Snapshot(ctx, owner, sn.ID)
	if err != nil || kept == nil {
		t.Fatalf("after the dry run, the snapshot is gone: %v", err)
	}
	if !strings.HasPrefix(d.Message, "Delete ‘before the migration’? ") || !strings.Contains(d.Message, "You kept it until ") ||
		!strings.HasSuffix(d.Message, snapshots.NothingChangedDryWords) || !d.DryRun {
		t.Fatalf("the dry run says %q", d.Message)
	}

	_, agent, _ := e.Thread(t, "Fix the sign-in flow")
	_, dryErr := p.Delete(ctx, agent, snapshots.DeleteRequest{Box: b.Name, Snapshot: sn.ID})
	_, realErr := e.Keeps.Delete(ctx, agent, snapshots.DeleteRequest{Box: b.Name, Snapshot: sn.ID})
	if dryErr == nil || realErr == nil || dryErr.Error() != realErr.Error() {
		t.Fatalf("an agent's dry run refuses %v; the delete %v", dryErr, realErr)
	}
}
