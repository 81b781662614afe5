package proxmox_test

import (
	"context"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers/proxmox"
)

// TestTrashOnProxmox: a release moves a Proxmox box to the trash with a
// final snapshot: its guest stays, stopped, with its links down and onboot
// off, like an earlier guest, its disk still on its storage; restoring it
// from the trash brings its links up, onboot back as it was, and starts it
// as it ran. The guest keeps its MAC address throughout.
func TestTrashOnProxmox(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newSim(t, simOpts{})
	pool := dbtest.New(t)
	env, err := coretest.Build(ctx, pool, coretest.Options{Install: install, LocalRoot: t.TempDir(),
		Extra: []snapshots.Backend{{ID: "pve-lab", Kind: "proxmox", Label: "pve-lab", Snap: e.be, Boxes: e.be}}})
	must(t, err)
	t.Cleanup(env.Stop)
	b := adopt(t, env, "amber-fox", proxmox.KindLXC, lxcThin)
	before, err := e.sim.Guest(lxcThin)
	must(t, err)
	if !before.Running || !before.OnBoot || before.Config["net0"] == "" || strings.Contains(before.Config["net0"], "link_down=1") {
		t.Fatalf("the guest before: running %v onboot %v net0 %q", before.Running, before.OnBoot, before.Config["net0"])
	}

	op, err := env.Boxes.ReleaseBox(ctx, snapshots.Owner(), b.Name, "")
	must(t, err)
	if got := env.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("release: %s %s", got.State, deref(got.Error))
	}
	in, err := e.sim.Guest(lxcThin)
	if err != nil {
		t.Fatalf("the guest in the trash is gone: %v", err)
	}
	if in.Running || in.OnBoot || !strings.Contains(in.Config["net0"], "link_down=1") {
		t.Fatalf("the guest in the trash: running %v, onboot %v, net0 %q; want stopped, onboot off, link down", in.Running, in.OnBoot, in.Config["net0"])
	}
	if in.Written != before.Written {
		t.Errorf("the guest's disk in the trash holds %d, want %d", in.Written, before.Written)
	}
	entry, err := env.Boxes.TrashOf(ctx, snapshots.Owner(), b.Name)
	must(t, err)
	if entry.Final == nil || !strings.HasPrefix(entry.FinalName, "at the release at ") {
		t.Fatalf("no final snapshot on Proxmox: %q", entry.FinalWords)
	}
	if len(in.Snapshots) == 0 || !strings.Contains(entry.Costs, "On Proxmox its guest stays stopped, with its links down and onboot off") {
		t.Fatalf("the guest holds %d snapshots; the trash says %q", len(in.Snapshots), entry.Costs)
	}

	rop, err := env.Boxes.RestoreFromTrash(ctx, snapshots.Owner(), b.Name, "")
	must(t, err)
	if got := env.Wait(t, rop); got.State != snapshots.OpDone {
		t.Fatalf("restore from the trash: %s %s", got.State, deref(got.Error))
	}
	after, err := e.sim.Guest(lxcThin)
	must(t, err)
	if !after.Running || !after.OnBoot || strings.Contains(after.Config["net0"], "link_down=1") {
		t.Fatalf("restored from the trash: running %v, onboot %v, net0 %q", after.Running, after.OnBoot, after.Config["net0"])
	}
	if after.Config["net0"] != before.Config["net0"] {
		t.Errorf("net0 was %q, is %q after the trash", before.Config["net0"], after.Config["net0"])
	}
}
