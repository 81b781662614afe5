package proxmox_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/boxsnap/boxsnap/app/boot"
	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/demo"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/proxmox"
)

// TestDemoBackend: the demo's Proxmox VE is a simulator in this process,
// labelled as simulated, with pve-1 on LVM-thin and pve-2 on ZFS.
func TestDemoBackend(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	be, sim, err := boot.DemoProxmox(ctx, install, slog.New(slog.DiscardHandler))
	must(t, err)
	if !be.Simulated || be.Label != "Proxmox VE (simulated)" || be.Kind != "proxmox" {
		t.Fatalf("demo backend %+v", be)
	}
	if sim == nil {
		t.Fatal("no simulator")
	}
	for _, c := range []struct {
		g    providers.Guest
		typ  string
		take bool
	}{
		{guest(proxmox.KindLXC, "pve-1", 214), "lvmthin", true},
		{guest(proxmox.KindLXC, "pve-2", 221), "zfspool", true},
	} {
		plan, err := be.Snap.PlanSnapshots(ctx, c.g, nil)
		must(t, err)
		if plan.Storage.Type != c.typ || plan.Take.OK != c.take {
			t.Fatalf("demo plan of %s: %+v", c.g.Ref, plan)
		}
	}
}

// TestDemoForksKeepsAndUndoes: in the demo, a Proxmox box's snapshots fork
// and keep (its guest has the identity reset), and the ZFS box's restore
// can be undone (the switch is on for the simulated node only).
func TestDemoForksKeepsAndUndoes(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	be, _, err := boot.DemoProxmox(ctx, install, slog.New(slog.DiscardHandler))
	must(t, err)
	pool := dbtest.New(t)
	env, err := coretest.Build(ctx, pool, coretest.Options{Install: install, LocalRoot: t.TempDir(), Extra: []snapshots.Backend{be}})
	must(t, err)
	t.Cleanup(env.Stop)
	must(t, demo.SeedProxmox(ctx, env.Boxes, be.ID, slog.New(slog.DiscardHandler)))

	sn := takeDone(t, env, snapshots.Owner(), "grey-ridge", "demo")
	if sn.ForkSafe == nil {
		t.Fatalf("the demo's grey-ridge took a snapshot without the identity reset")
	}
	keepDone(t, env, "grey-ridge", sn.ID)
	fop, err := env.Forks.Fork(ctx, snapshots.Owner(), fork.ForkRequest{Box: "grey-ridge", Snapshot: sn.ID})
	must(t, err)
	if got := env.Wait(t, fop); got.State != snapshots.OpDone {
		t.Fatalf("fork in the demo: %s %s", got.State, deref(got.Error))
	}

	z := takeDone(t, env, snapshots.Owner(), "tidy-glade", "newest")
	op := restoreDone(t, env, "tidy-glade", z.ID)
	if op.UndoID == nil {
		t.Fatalf("the demo's ZFS restore has no undo")
	}
	restoreDone(t, env, "tidy-glade", *op.UndoID)
	if got, _, err := env.Core.Snapshot(ctx, snapshots.Owner(), z.ID); err != nil || got.Guest != "earlier" {
		t.Fatalf("after the undo, %q is on %v (%v); want tidy-glade's earlier guest", z.Name, got, err)
	}
}
