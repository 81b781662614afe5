package api_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// heldRestore wraps a backend so a restore waits at its first step until
// let goes, and fails at its start when fail is set.
type heldRestore struct {
	providers.Backend
	hold    atomic.Bool
	entered chan struct{}
	let     chan struct{}
	fail    atomic.Bool
}

func (h *heldRestore) RestoreSnapshot(ctx context.Context, g providers.Guest, ref providers.SnapshotRef, step providers.RestoreStep, rec providers.Recorder) (providers.RestoreProgress, error) {
	if h.hold.Swap(false) {
		close(h.entered)
		select {
		case <-h.let:
		case <-ctx.Done():
			return providers.RestoreProgress{}, ctx.Err()
		}
	}
	if step == providers.StepStart && h.fail.Load() {
		return providers.RestoreProgress{}, errors.New("the test's start fails")
	}
	return h.Backend.RestoreSnapshot(ctx, g, ref, step, rec)
}

// TestApprovedRestoreEndIsTold: when the restore an approval started ends,
// the request's record and what its agent reads over the tools say how,
// in the past tense: "…approved your request at 10:42; dev-desk was
// restored to ‘before the upgrade’ at 10:43", or "…the restore … failed:
// why", even when the agent was already told that it started.
func TestApprovedRestoreEndIsTold(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	held := &heldRestore{entered: make(chan struct{}), let: make(chan struct{})}
	e := setupWith(t, coretest.Options{Wrap: func(b snapshots.Backend) snapshots.Backend {
		held.Backend = b.Snap
		b.Snap = held
		return b
	}})
	token, agent := e.agent(t, "Fix the sign-in flow")
	// dev-desk runs, so its restores end with their start step (a restore
	// leaves a stopped box stopped), which the test fails on its second.
	b, err := e.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "dev-desk", Backend: "local", Command: "while :; do sleep 1; done"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Boxes.SetPresence(ctx, snapshots.Owner(), b.ID, snapshots.Presence{Workspaces: []snapshots.Workspace{{Thread: agent.Thread, RunsOn: true}}}); err != nil {
		t.Fatal(err)
	}
	sn := e.call(t, "POST", "/tools/box_snapshot", token, map[string]any{"box": "dev-desk", "name": "before the upgrade"}).must(t, 200).str("snapshot")
	st, _ := e.Core.Settings(ctx)
	st.ExecutionMachineRestores = true
	if err := e.Core.SaveSettings(ctx, snapshots.Owner(), st); err != nil {
		t.Fatal(err)
	}
	ask := func() string {
		t.Helper()
		id := e.call(t, "POST", "/tools/box_restore", token, map[string]any{"box": "dev-desk", "snapshot": sn, "replace": true}).must(t, 202).str("request")
		if id == "" {
			t.Fatal("box_restore asked nothing")
		}
		return id
	}
	opOf := func(id string) *snapshots.Operation {
		t.Helper()
		a, err := e.Approvals.Get(ctx, snapshots.Owner(), id)
		if err != nil || a.Operation == nil {
			t.Fatalf("request %s has no operation: %v", id, err)
		}
		op, err := e.Core.Operation(ctx, snapshots.Owner(), *a.Operation)
		if err != nil {
			t.Fatal(err)
		}
		return op
	}

	// Approved, the restore held at its first step: the agent is told it
	// started (as an agent on another box would be, between its calls).
	id := ask()
	held.hold.Store(true)
	e.call(t, "POST", "/approvals/"+id+"/approve", e.owner, nil).must(t, 202)
	select {
	case <-held.entered:
	case <-time.After(time.Minute):
		t.Fatal("the approved restore never ran")
	}
	if news := strings.Join(e.Approvals.News(ctx, agent.Thread), " "); !strings.Contains(news, "The person approved your request "+id) || !strings.Contains(news, "started then") {
		t.Fatalf("while the restore runs, the agent hears: %q", news)
	}
	close(held.let)
	op := e.Wait(t, opOf(id))
	if op.State != snapshots.OpDone {
		t.Fatalf("the approved restore ended %s", op.State)
	}
	tz := e.Core.TimeZone(ctx)
	restored := "; dev-desk was restored to ‘before the upgrade’ at " + op.EndedAt.In(tz).Format("15:04") + ", with an undo (operation " + op.ID + ")."
	a := e.call(t, "POST", "/tools/box_snapshots", token, map[string]any{}).must(t, 200)
	if !strings.Contains(string(a.Raw), `"requests":["The person approved your request `+id+` at `) || !strings.Contains(string(a.Raw), restored) {
		t.Fatalf("after the restore, the agent's next call does not say how it ended (%q):\n%s", restored, a.Raw)
	}
	a = e.call(t, "POST", "/tools/box_snapshots", token, map[string]any{}).must(t, 200)
	if strings.Contains(string(a.Raw), `"requests"`) {
		t.Errorf("the end is told more than once:\n%s", a.Raw)
	}
	a = e.call(t, "GET", "/approvals/"+id, e.owner, nil).must(t, 200)
	if !strings.Contains(a.str("answer"), restored) {
		t.Errorf("the request's record does not say how its restore ended: %s", a.Raw)
	}

	// Approved and failed: the agent hears why.
	id = ask()
	held.fail.Store(true)
	e.call(t, "POST", "/approvals/"+id+"/approve?wait=true", e.owner, nil).must(t, 409)
	op = e.Wait(t, opOf(id))
	if op.State != snapshots.OpFailed {
		t.Fatalf("the approved restore that fails at its start ended %s", op.State)
	}
	a = e.call(t, "POST", "/tools/box_snapshots", token, map[string]any{}).must(t, 200)
	failed := "; the restore of dev-desk to ‘before the upgrade’ failed (operation " + op.ID + "): " + *op.Error
	if !strings.Contains(string(a.Raw), `"requests":["The person approved your request `+id+` at `) || !strings.Contains(string(a.Raw), failed) {
		t.Fatalf("after the failed restore, the agent's next call does not say why (%q):\n%s", failed, a.Raw)
	}
}
