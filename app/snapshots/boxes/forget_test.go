package boxes_test

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
	"github.com/boxsnap/boxsnap/providers/local"
)

// TestForgetRemovedBackend: a backend removed from the settings leaves its
// snapshots unavailable, not lost; "Forget its snapshots" is the person's,
// names them with their size, removes the records only (what the backend
// holds stays), and says so.
func TestForgetRemovedBackend(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root, localRoot := t.TempDir(), t.TempDir()
	t.Cleanup(func() { _ = local.UnmountAll(root); _ = local.UnmountAll(localRoot) })
	if err := local.Passable(root, os.TempDir()); err != nil {
		t.Fatal(err)
	}
	first := coretest.New(t, coretest.Options{NoWorkers: true})
	gone, err := local.New(local.Config{ID: "pve-gone", Root: root, Install: first.Install, Logger: slog.New(slog.DiscardHandler), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	// The install with pve-gone in its settings: a box there, two snapshots.
	e, err := coretest.Build(ctx, first.Pool, coretest.Options{NoWorkers: true, LocalRoot: localRoot,
		Extra: []snapshots.Backend{{ID: "pve-gone", Kind: "local", Label: "pve-gone", Snap: gone, Boxes: gone}}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "amber-fox", Backend: "pve-gone"})
	if err != nil {
		t.Fatal(err)
	}
	one := e.AdmitReady(t, snapshots.Owner(), "amber-fox", "before the upgrade")
	two := e.AdmitReady(t, snapshots.Owner(), "amber-fox", "after the upgrade")
	if _, err := e.Boxes.ForgetBackendPlan(ctx, snapshots.Owner(), "pve-gone"); err == nil {
		t.Fatal("Forget of a backend still in settings was offered")
	} else {
		coretest.RefusedWith(t, err, "pve-gone is in settings: delete its snapshots instead.")
	}

	// The same install after pve-gone is removed from its settings.
	later, err := coretest.Build(ctx, first.Pool, coretest.Options{NoWorkers: true, LocalRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := later.Sweeps.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{one.ID, two.ID} {
		sn, _, err := later.Core.Snapshot(ctx, snapshots.Owner(), id)
		if err != nil || sn.State != snapshots.StateUnavailable {
			t.Fatalf("a removed backend's snapshot: %v %v, want unavailable", sn, err)
		}
	}
	goneList, err := later.Boxes.GoneBackends(ctx)
	if err != nil || len(goneList) != 1 || goneList[0].ID != "pve-gone" || goneList[0].Snapshots != 2 {
		t.Fatalf("gone backends: %+v %v", goneList, err)
	}

	// Only the person forgets.
	_, agent, _ := later.Thread(t, "Fix the sign-in flow")
	if _, _, err := later.Boxes.ForgetBackend(ctx, agent, "pve-gone"); err == nil {
		t.Fatal("an agent forgot a backend's snapshots")
	} else {
		coretest.RefusedWith(t, err, "Only the person forgets snapshots.")
	}

	plan, err := later.Boxes.ForgetBackendPlan(ctx, snapshots.Owner(), "pve-gone")
	if err != nil {
		t.Fatal(err)
	}
	size := snapshots.GB(plan.Bytes)
	if plan.Bytes == 0 {
		t.Fatal("the plan names no size")
	}
	for _, w := range []string{"Forget the 2 snapshots of pve-gone (" + size + "), a backend no longer in settings?",
		"boxsnap removes their records only: they may still exist on pve-gone and be billed."} {
		if !strings.Contains(plan.Words, w) {
			t.Errorf("the plan says %q, not %q", plan.Words, w)
		}
	}
	lines := strings.Join(plan.Lines, "\n")
	for _, w := range []string{"‘before the upgrade’ of amber-fox (", "‘after the upgrade’ of amber-fox ("} {
		if !strings.Contains(lines, w) {
			t.Errorf("the plan's lines %q do not name %q", lines, w)
		}
	}
	// Checking changed nothing.
	if sn, _, err := later.Core.Snapshot(ctx, snapshots.Owner(), one.ID); err != nil || sn == nil {
		t.Fatalf("the plan removed a record: %v", err)
	}

	p, kept, err := later.Boxes.ForgetBackend(ctx, snapshots.Owner(), "pve-gone")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := boxes.ForgotWords(p, kept), "Forgot 2 snapshots of pve-gone: their records only. They may still exist on pve-gone and be billed."; got != want {
		t.Errorf("Forget says %q, want %q", got, want)
	}
	for _, id := range []string{one.ID, two.ID} {
		if _, _, err := later.Core.Snapshot(ctx, snapshots.Owner(), id); err == nil {
			t.Errorf("%s is still recorded after Forget", id)
		}
	}
	if g, _ := later.Boxes.GoneBackends(ctx); len(g) != 0 {
		t.Errorf("gone backends after Forget: %+v", g)
	}
	// Records only: the backend still holds both snapshots.
	held, err := gone.HeldSnapshots(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(held) != 2 {
		t.Errorf("pve-gone holds %d snapshots after Forget, want the 2 it held", len(held))
	}
	// The box log says it, in the person's name.
	events, err := later.Boxes.BoxLog(ctx, snapshots.Owner(), b.Name, 100)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range events {
		if ev.Kind == boxes.EvSnapshotForgotten {
			n++
			if !strings.Contains(ev.Words, "its record only; its backend pve-gone is not in settings, so it may still exist there and be billed") || ev.ActorKind != "owner" {
				t.Errorf("forgotten event: %+v", ev)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d forgotten events, want 2", n)
	}
	// Nothing more to forget.
	if _, err := later.Boxes.ForgetBackendPlan(ctx, snapshots.Owner(), "pve-gone"); err == nil {
		t.Error("Forget offered with nothing recorded")
	}
}
