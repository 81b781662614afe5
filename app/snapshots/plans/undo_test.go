package plans_test

import (
	"context"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/plans"
)

// TestUndoPlanOfAnUndoTheAgentCannotSee: on a box an agent's thread runs
// on, whose newest undo the person took, the undo's dry run refuses as
// the real undo does ("No snapshot … that you can see"), not "has no
// undo", and changes nothing.
func TestUndoPlanOfAnUndoTheAgentCannotSee(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{})
	p := plans.New(e.Core, e.Restores, e.Restores.Resets(), nil)
	owner := snapshots.Owner()
	b := e.Box(t, owner, "calm-moss")
	sn := e.TakeReady(t, owner, b.Name, "before the change")
	op, err := e.Restores.Restore(ctx, owner, snapshots.RestoreRequest{Box: b.Name, Snapshot: sn.ID, Replace: true})
	if err != nil {
		t.Fatal(err)
	}
	if op = e.Wait(t, op); op.State != snapshots.OpDone {
		t.Fatalf("the person's restore ended %s: %s", op.State, coretest.Deref(op.Error))
	}
	_, agent, _ := e.Thread(t, "Work on the machine")
	if _, err := e.Boxes.SetPresence(ctx, owner, b.ID, snapshots.Presence{Workspaces: []snapshots.Workspace{{Thread: agent.Thread, RunsOn: true}}}); err != nil {
		t.Fatal(err)
	}

	_, dry := p.Undo(ctx, agent, b.Name, false)
	_, real := e.Restores.Resets().UndoNewest(ctx, agent, b.Name, "", false)
	if dry == nil || real == nil || dry.Error() != real.Error() || !strings.Contains(dry.Error(), "that you can see") {
		t.Fatalf("an undo the agent cannot see: the dry run refuses %v, the undo %v", dry, real)
	}
	if strings.Contains(dry.Error(), "has no undo") {
		t.Fatalf("the dry run says %q", dry)
	}
	// The person sees the undo: their dry run goes on to the restore's
	// own rules.
	if _, err := p.Undo(ctx, owner, b.Name, true); err != nil && (strings.Contains(err.Error(), "that you can see") || strings.Contains(err.Error(), "has no undo")) {
		t.Fatalf("the person's undo dry run: %v", err)
	}
}
