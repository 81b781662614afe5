package approvals_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
)

// TestAnAgentsRestoreWaitsForThePersonsWord: with "Agents may restore their own boxes" off, an
// agent's restore asks the person instead, with the request's ID; the
// request shows its plan; an approval runs the restore as the agent's with
// the yes recorded and an undo taken, as the box log says; a declined
// request and an expired one answer the agent's next call in words; a plan
// that changed refuses and shows the new plan; answered requests are not
// answered twice.
func TestAnAgentsRestoreWaitsForThePersonsWord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{NoWorkers: true})
	th, agent, token := e.Thread(t, "Fix the sign-in flow")
	b := e.Box(t, agent, "amber-fox")
	sn := e.AdmitReady(t, agent, "amber-fox", "before the migration")
	e.SetSettings(t, func(st *snapshots.Settings) { st.AgentsMayRestore = false })

	// Only the person answers.
	_, err := e.Restores.Restore(ctx, agent, snapshots.RestoreRequest{Box: "amber-fox", Snapshot: sn.ID, Replace: true})
	ap := coretest.Asked(t, err, "You asked the person to restore amber-fox to ‘before the migration’ (request ap", "It waits for their word.")
	if _, err := e.Approvals.Approve(ctx, agent, ap.ID); err == nil {
		t.Fatal("an agent approved its own request")
	}
	pending, err := e.Approvals.List(ctx, snapshots.Owner(), "")
	if err != nil || len(pending) != 1 || pending[0].ID != ap.ID || pending[0].ThreadTitle != th.Title {
		t.Fatalf("pending requests: %+v %v", pending, err)
	}
	if plan := strings.Join(pending[0].Plan, " "); !strings.Contains(plan, "Restore amber-fox to ‘before the migration’: everything on its disk since then goes.") ||
		!strings.Contains(plan, "An undo of amber-fox is taken first; it cannot be left out.") {
		t.Fatalf("the request's plan: %q", plan)
	}

	// A plan that changed refuses, shows the new plan, and asks again.
	if _, err := e.Boxes.SetPresence(ctx, snapshots.Owner(), b.ID, snapshots.Presence{Terminals: 1}); err != nil {
		t.Fatal(err)
	}
	_, err = e.Approvals.Approve(ctx, snapshots.Owner(), ap.ID)
	coretest.RefusedWith(t, err, "The plan changed since the request, so nothing was restored. Now:", "A terminal is open on it.", "Approve again to restore with this plan.")
	// The yes: the restore runs as the agent's, with an undo, on the yes.
	op, err := e.Approvals.Approve(ctx, snapshots.Owner(), ap.ID)
	if err != nil {
		t.Fatal(err)
	}
	var yes struct{ By, Request string }
	_ = json.Unmarshal(op.Consent, &yes)
	if op.ByKind != "agent" || yes.By != "the person" || yes.Request != ap.ID {
		t.Fatalf("the approved restore's operation: by %s, consent %s", op.ByKind, op.Consent)
	}
	runOp(t, e, op)
	events, _ := e.Boxes.BoxLog(ctx, snapshots.Owner(), "amber-fox", 50)
	var restored, requested bool
	for _, ev := range events {
		if ev.Kind == snapshots.EvRestored && strings.Contains(ev.Words, "on a yes given by the person at ") {
			restored = true
		}
		if ev.Kind == snapshots.EvRestoreRequested {
			requested = true
		}
	}
	if !restored || !requested {
		t.Fatalf("the box log does not show the request and the restore on the person's yes: %+v", events)
	}
	if call := agentCall(t, e, token); call.Thread != agent.Thread || !call.News {
		t.Fatalf("the agent's call does not see its news: %+v", call)
	}
	if got := e.Approvals.News(ctx, agent.Thread); len(got) != 1 || !strings.HasPrefix(got[0], "The person approved your request "+ap.ID) {
		t.Fatalf("the agent's next call: %q", got)
	}
	if got := e.Approvals.News(ctx, agent.Thread); len(got) != 0 {
		t.Fatalf("told twice: %q", got)
	}
	if call := agentCall(t, e, token); call.News {
		t.Fatalf("the agent's call sees news it was told: %+v", call)
	}
	if _, err := e.Approvals.Approve(ctx, snapshots.Owner(), ap.ID); err == nil {
		t.Fatal("a request answered twice")
	}

	// Declined: nothing is restored, and the next call says so.
	_, err = e.Restores.Restore(ctx, agent, snapshots.RestoreRequest{Box: "amber-fox", Snapshot: sn.ID, Replace: true})
	ap2 := coretest.Asked(t, err)
	if err := e.Approvals.Decline(ctx, snapshots.Owner(), ap2.ID); err != nil {
		t.Fatal(err)
	}
	if call := agentCall(t, e, token); !call.News {
		t.Fatalf("the agent's call does not see its declined request: %+v", call)
	}
	if got := e.Approvals.News(ctx, agent.Thread); len(got) != 1 || got[0] != "The person declined your request "+ap2.ID+" to restore amber-fox to ‘before the migration’: nothing was restored." {
		t.Fatalf("a declined request's words: %q", got)
	}

	// Expired after the setting's minutes: the next call says so.
	e.SetSettings(t, func(st *snapshots.Settings) { st.ApprovalMinutes = 1 })
	_, err = e.Restores.Restore(ctx, agent, snapshots.RestoreRequest{Box: "amber-fox", Snapshot: sn.ID, Replace: true})
	ap3 := coretest.Asked(t, err)
	if _, err := e.Pool.Exec(ctx, "UPDATE approvals SET expires_at = now() - interval '1 second' WHERE id = $1", ap3.ID); err != nil {
		t.Fatal(err)
	}
	if call := agentCall(t, e, token); !call.News {
		t.Fatalf("the agent's call does not see its expired request: %+v", call)
	}
	if got := e.Approvals.News(ctx, agent.Thread); len(got) != 1 || !strings.HasPrefix(got[0], "Your request "+ap3.ID+" expired at ") || !strings.HasSuffix(got[0], "with no answer: nothing was restored.") {
		t.Fatalf("an expired request's words: %q", got)
	}
	_, err = e.Approvals.Approve(ctx, snapshots.Owner(), ap3.ID)
	coretest.RefusedWith(t, err, "Request "+ap3.ID+" expired at ")

	// With the switch on again, the agent restores its own box by itself.
	e.SetSettings(t, func(st *snapshots.Settings) { st.AgentsMayRestore = true })
	if _, err := e.Boxes.SetPresence(ctx, snapshots.Owner(), b.ID, snapshots.Presence{}); err != nil {
		t.Fatal(err)
	}
	if op, err := e.Restores.Restore(ctx, agent, snapshots.RestoreRequest{Box: "amber-fox", Snapshot: sn.ID, Replace: true}); err != nil || op == nil {
		t.Fatalf("with the switch on, the agent's restore: %v", err)
	}
}

// TestExecutionMachineRestoreHoldsTurns: restores of a box threads run on are off
// by default, for everyone; with the switch on, an agent's restore asks
// through a request whose words tell it to end its turn, the turns of every
// thread on the box are held (their tools answer try_again) while the
// request waits and while the restore runs, the person's yes restores with
// an undo that cannot be left out, and the hold ends with the restore.
func TestExecutionMachineRestoreHoldsTurns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{NoWorkers: true})
	_, agent, agentToken := e.Thread(t, "Fix the sign-in flow")
	_, neighbour, neighbourToken := e.Thread(t, "Write the API guide")
	_, elsewhere, elsewhereToken := e.Thread(t, "Tidy the docs")
	tokens := map[string]string{agent.Thread: agentToken, neighbour.Thread: neighbourToken, elsewhere.Thread: elsewhereToken}
	turnHeld := func(c snapshots.Caller) string { return heldBoth(t, e, c, tokens[c.Thread]) }
	b := e.Box(t, snapshots.Owner(), "dev-desk")
	if _, err := e.Boxes.SetPresence(ctx, snapshots.Owner(), b.ID, snapshots.Presence{Workspaces: []snapshots.Workspace{
		{Thread: agent.Thread, RunsOn: true, Working: true}, {Thread: neighbour.Thread, RunsOn: true}}}); err != nil {
		t.Fatal(err)
	}
	sn := e.AdmitReady(t, agent, "dev-desk", "before the upgrade")

	// Off by default, for everyone.
	if st, _ := e.Core.Settings(ctx); st.ExecutionMachineRestores {
		t.Fatal("restores of boxes threads run on are on by default")
	}
	for _, c := range []snapshots.Caller{agent, snapshots.Owner()} {
		_, err := e.Restores.Restore(ctx, c, snapshots.RestoreRequest{Box: "dev-desk", Snapshot: sn.ID, Replace: true, Force: true})
		coretest.RefusedWith(t, err, "Restores of boxes threads run on are off: Fix the sign-in flow and Write the API guide run on dev-desk. Move its threads off it first.")
	}

	e.SetSettings(t, func(st *snapshots.Settings) { st.ExecutionMachineRestores = true })
	_, err := e.Restores.Restore(ctx, agent, snapshots.RestoreRequest{Box: "dev-desk", Snapshot: sn.ID, Replace: true})
	ap := coretest.Asked(t, err, "You asked the person to restore dev-desk to ‘before the upgrade’ (request ", "End your turn now: nothing you do on dev-desk after this survives the restore.")
	held := approvals.HeldWords("dev-desk")
	for _, c := range []snapshots.Caller{agent, neighbour} {
		if got := turnHeld(c); got != held {
			t.Fatalf("while the request waits, %s's turn: %q, want held", c.Thread, got)
		}
	}
	if got := turnHeld(elsewhere); got != "" {
		t.Fatalf("a thread not on the box is held: %q", got)
	}
	// The person's own restore of it never leaves out the undo.
	_, err = e.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "dev-desk", Snapshot: sn.ID, NoUndo: true, Force: true})
	coretest.RefusedWith(t, err, "dev-desk is a box threads run on: it is never restored without an undo.")

	op, err := e.Approvals.Approve(ctx, snapshots.Owner(), ap.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := turnHeld(neighbour); got != held {
		t.Fatalf("while the restore runs, the neighbour's turn: %q", got)
	}
	runOp(t, e, op)
	done := e.Wait(t, op)
	if done.State != snapshots.OpDone || done.UndoID == nil {
		t.Fatalf("the approved restore: %s, undo %v, %v", done.State, done.UndoID, done.Error)
	}
	for _, c := range []snapshots.Caller{agent, neighbour} {
		if got := turnHeld(c); got != "" {
			t.Fatalf("after the restore, %s is still held: %q", c.Thread, got)
		}
	}
}

// agentCall reads what an agent's call with token needs before its tool
// runs.
func agentCall(t *testing.T, e *coretest.Env, token string) *approvals.AgentCall {
	t.Helper()
	call, err := e.Approvals.AgentCall(context.Background(), token)
	if err != nil {
		t.Fatal(err)
	}
	return call
}

// heldBoth is TurnHeld's words for c's thread, which the agent's call,
// read with its token in one statement, must say alike.
func heldBoth(t *testing.T, e *coretest.Env, c snapshots.Caller, token string) string {
	t.Helper()
	held := e.Approvals.TurnHeld(context.Background(), c.Thread)
	if call := agentCall(t, e, token); call.Thread != c.Thread || call.Held != held {
		t.Fatalf("the agent's call says its turn is held by %q, TurnHeld %q", call.Held, held)
	}
	return held
}
