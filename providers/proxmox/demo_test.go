package proxmox_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/boxsnap/boxsnap/app/boot"
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
