package restore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// TestRestoreGuard: the guard reads the presence the platform reports: a
// thread's workspace, working or idle, a person holding the desktop, an open
// terminal. An agent's restore is refused naming each; the person's goes on
// only with Restore anyway. A box threads run on is refused for everyone,
// naming its threads.
func TestRestoreGuard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{NoWorkers: true})
	_, agent, _ := e.Thread(t, "Fix the sign-in flow")
	working, workingAgent, _ := e.Thread(t, "Write the API guide")
	idle, _, _ := e.Thread(t, "Tidy the docs")
	b := e.Box(t, agent, "amber-fox")
	sn := e.AdmitReady(t, agent, "amber-fox", "before the migration")

	presence := snapshots.Presence{
		Workspaces: []snapshots.Workspace{{Thread: working.ID, Working: true}, {Thread: idle.ID}, {Thread: agent.Thread}},
		Desktop:    "you",
		Terminals:  1,
	}
	if _, err := e.Boxes.SetPresence(ctx, snapshots.Owner(), b.ID, presence); err != nil {
		t.Fatal(err)
	}
	_, err := e.Restores.Restore(ctx, agent, snapshots.RestoreRequest{Box: "amber-fox", Snapshot: sn.ID, Replace: true})
	coretest.RefusedWith(t, err, "amber-fox cannot be restored now.",
		"Write the API guide is working on amber-fox: its worktree, uncommitted files and session there go.",
		"Tidy the docs is idle on amber-fox: the same", "You have control of its desktop.", "A terminal is open on it.")
	if r, _ := snapshots.AsRefusal(err); !r.TryAgain {
		t.Error("the guard's refusal holds only for now: try_again")
	}
	if r, _ := snapshots.AsRefusal(err); strings.Contains(r.Words, "Fix the sign-in flow") {
		t.Errorf("the agent's own workspace on its own box is named: %q", r.Words)
	}
	// The person: a thread's workspace, working or idle, makes a box threads
	// run on, refused for everyone, Restore anyway included: Restore anyway
	// passes only the desktop and the terminals.
	for _, force := range []bool{false, true} {
		for _, c := range []snapshots.Caller{snapshots.Owner(), snapshots.CLI()} {
			_, err = e.Restores.Restore(ctx, c, snapshots.RestoreRequest{Box: "amber-fox", Snapshot: sn.ID, Force: force})
			coretest.RefusedWith(t, err, "Restores of boxes threads run on are off: Write the API guide and Tidy the docs and Fix the sign-in flow run on amber-fox. Move its threads off it first.")
		}
	}
	if _, err := e.Boxes.SetPresence(ctx, snapshots.Owner(), b.ID, snapshots.Presence{Desktop: "you", Terminals: 1}); err != nil {
		t.Fatal(err)
	}
	_, err = e.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "amber-fox", Snapshot: sn.ID})
	coretest.RefusedWith(t, err, "Restoring amber-fox also ends this. You have control of its desktop. A terminal is open on it. Restore anyway to go on.")
	op, err := e.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "amber-fox", Snapshot: sn.ID, Force: true})
	if err != nil || op == nil {
		t.Fatalf("Restore anyway: %v", err)
	}

	// A box a thread runs on is an execution machine: off for everyone.
	if _, err := e.Boxes.SetPresence(ctx, snapshots.Owner(), b.ID, snapshots.Presence{Workspaces: []snapshots.Workspace{{Thread: workingAgent.Thread, RunsOn: true}}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []snapshots.Caller{agent, snapshots.Owner(), snapshots.CLI()} {
		_, err := e.Restores.Restore(ctx, c, snapshots.RestoreRequest{Box: "amber-fox", Snapshot: sn.ID, Replace: true, Force: true})
		coretest.RefusedWith(t, err, "Restores of boxes threads run on are off: Write the API guide runs on amber-fox.")
	}
}
