package snapshots_test

import (
	"context"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
)

// TestSwitchesTakeEffect: every switch on Settings, Snapshots changes what it
// names, and back. "Agents may restore their own boxes" off turns an agent's
// restore into a request; "Agents may restore memory snapshots" off refuses
// an agent's restore of one (it is not asked for); "Keep a picture of the
// screen" off takes snapshots with their picture off; "Restores of boxes
// threads run on" on lets the person restore one and an agent ask.
func TestSwitchesTakeEffect(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{NoWorkers: true})
	_, agent, _ := e.Thread(t, "Fix the sign-in flow")
	e.Box(t, agent, "amber-fox")
	sn := e.AdmitReady(t, agent, "amber-fox", "before")
	restore := func() error {
		_, err := e.Restores.Restore(ctx, agent, snapshots.RestoreRequest{Box: "amber-fox", Snapshot: sn.ID, Replace: true, RequestID: snapshots.NewID("rq")})
		return err
	}

	t.Run("agentsMayRestore", func(t *testing.T) {
		e.SetSettings(t, func(st *snapshots.Settings) { st.AgentsMayRestore = false })
		coretest.Asked(t, restore(), "You asked the person to restore amber-fox to ‘before’")
		e.SetSettings(t, func(st *snapshots.Settings) { st.AgentsMayRestore = true })
		// The pending request holds nothing here (not a box threads run
		// on): the agent restores by itself again.
		if err := restore(); err != nil {
			t.Fatalf("switched on, the agent's restore: %v", err)
		}
	})

	t.Run("agentsMayRestoreMemory", func(t *testing.T) {
		e2 := coretest.New(t, coretest.Options{NoWorkers: true})
		_, ag, _ := e2.Thread(t, "Memory")
		e2.Box(t, ag, "brisk-lake")
		m := e2.AdmitReady(t, ag, "brisk-lake", "with memory")
		// The local backend holds disks only: the record says memory, as
		// a memory-holding backend's would.
		if _, err := e2.Pool.Exec(ctx, "UPDATE snapshots SET holds = 'disk-and-memory' WHERE id = $1", m.ID); err != nil {
			t.Fatal(err)
		}
		e2.SetSettings(t, func(st *snapshots.Settings) { st.AgentsMayRestoreMemory = false })
		_, err := e2.Restores.Restore(ctx, ag, snapshots.RestoreRequest{Box: "brisk-lake", Snapshot: m.ID, Replace: true})
		refusedExactly(t, err, "Only the person restores a memory snapshot in this install.")
		if _, ok := approvals.AsAsked(err); ok {
			t.Fatal("a memory restore was asked for, not refused")
		}
		e2.SetSettings(t, func(st *snapshots.Settings) { st.AgentsMayRestoreMemory = true })
		if _, err := e2.Restores.Restore(ctx, ag, snapshots.RestoreRequest{Box: "brisk-lake", Snapshot: m.ID, Replace: true}); err != nil {
			t.Fatalf("switched on, the agent's memory restore: %v", err)
		}
	})

	t.Run("pictures", func(t *testing.T) {
		e3 := coretest.New(t, coretest.Options{NoWorkers: true})
		if _, err := e3.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "screen-box", Backend: "local", HasScreen: true, ScreenURL: "http://127.0.0.1:1/"}); err != nil {
			t.Fatal(err)
		}
		e3.SetSettings(t, func(st *snapshots.Settings) { st.Pictures = false })
		_, off, err := e3.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: "screen-box"})
		if err != nil || off.Picture != "off" {
			t.Fatalf("pictures off: picture %q, %v", off.Picture, err)
		}
		e3.SetSettings(t, func(st *snapshots.Settings) { st.Pictures = true })
		_, on, err := e3.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: "screen-box"})
		if err != nil || on.Picture == "off" {
			t.Fatalf("pictures on: picture %q, %v", on.Picture, err)
		}
	})

	t.Run("executionMachineRestores", func(t *testing.T) {
		e4 := coretest.New(t, coretest.Options{NoWorkers: true})
		_, ag, _ := e4.Thread(t, "Runs there")
		b := e4.Box(t, snapshots.Owner(), "dev-desk")
		x := e4.AdmitReady(t, snapshots.Owner(), "dev-desk", "before")
		if _, err := e4.Boxes.SetPresence(ctx, snapshots.Owner(), b.ID, snapshots.Presence{Workspaces: []snapshots.Workspace{{Thread: ag.Thread, RunsOn: true}}}); err != nil {
			t.Fatal(err)
		}
		_, err := e4.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "dev-desk", Snapshot: x.ID, Force: true})
		coretest.RefusedWith(t, err, "Restores of boxes threads run on are off")
		e4.SetSettings(t, func(st *snapshots.Settings) { st.ExecutionMachineRestores = true })
		if op, err := e4.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "dev-desk", Snapshot: x.ID, Force: true}); err != nil || op == nil {
			t.Fatalf("switched on, the person's restore of a box threads run on: %v", err)
		}
	})
}
