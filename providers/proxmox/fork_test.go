package proxmox_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/snapshots"
	forks "github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/providers/proxmox"
)

// TestForkRearmed: a fork is made unable to start as its source, armed just
// before its first start, checked before it is ready (its MAC and IP
// addresses none of its source's) and only then set to start at boot; a fork
// that holds its source's address is refused and released; a snapshot without
// the identity reset does not fork.
func TestForkRearmed(t *testing.T) {
	t.Parallel()
	e := newSim(t, simOpts{})
	env := newCore(t, e, "", nil)
	c := adminClient(t, e.sim, e.url)
	ctx := context.Background()
	adopt(t, env, "amber-fox", proxmox.KindLXC, lxcThin)
	sn := takeDone(t, env, snapshots.Owner(), "amber-fox", "before")
	op, err := env.Forks.Fork(ctx, snapshots.Owner(), forks.ForkRequest{Box: "amber-fox", Snapshot: sn.ID, Name: "amber-fox"})
	if err == nil {
		t.Fatalf("a fork given its source's living name was admitted: %+v", op)
	}
	op, err = env.Forks.Fork(ctx, snapshots.Owner(), forks.ForkRequest{Box: "amber-fox", Snapshot: sn.ID, Name: "amber-twin"})
	must(t, err)
	got := env.Wait(t, op)
	if got.State != snapshots.OpDone {
		t.Fatalf("fork: %s %s", got.State, deref(got.Error))
	}
	fork, err := env.Core.Box(ctx, snapshots.Owner(), "amber-twin")
	must(t, err)
	vmid, _ := strconv.Atoi(fork.GuestRef)
	fg, err := e.sim.Guest(vmid)
	must(t, err)
	src, _ := e.sim.Guest(lxcThin)
	fmac, smac := macOf.FindStringSubmatch(fg.Config["net0"])[1], macOf.FindStringSubmatch(src.Config["net0"])[1]
	if !fg.Running || !fg.OnBoot || strings.Contains(fg.Config["net0"], "link_down=1") || strings.EqualFold(fmac, smac) {
		t.Fatalf("the fork: running %v onboot %v net0 %q; source's MAC %s", fg.Running, fg.OnBoot, fg.Config["net0"], smac)
	}
	// A source with a static address: its fork holds it, so it is refused,
	// released, and says why.
	must(t, c.Put(ctx, map[string]any{"net0": strings.Replace(src.Config["net0"], "ip=dhcp", "ip=10.0.0.5/24", 1)}, fmt.Sprintf("/nodes/pve-1/lxc/%d/config", lxcThin)))
	st := takeDone(t, env, snapshots.Owner(), "amber-fox", "static")
	op, err = env.Forks.Fork(ctx, snapshots.Owner(), forks.ForkRequest{Box: "amber-fox", Snapshot: st.ID, Name: "amber-clash"})
	must(t, err)
	got = env.Wait(t, op)
	if got.State != snapshots.OpFailed || !strings.Contains(deref(got.Error), "failed the check before ready, so it was released") ||
		!strings.Contains(deref(got.Error), "holds its source's address 10.0.0.5/24") {
		t.Fatalf("a fork holding its source's address: %s %q", got.State, deref(got.Error))
	}
	if b, err := env.Core.Box(ctx, snapshots.Owner(), "amber-clash"); err == nil && b.State != "released" {
		t.Fatalf("the refused fork is %s", b.State)
	}
	for id := proxmox.DefaultVMIDFirst; id < proxmox.DefaultVMIDFirst+20; id++ {
		if g, err := e.sim.Guest(id); err == nil && g.Config["hostname"] == "amber-clash" {
			t.Fatalf("the refused fork's guest %d is still there", id)
		}
	}
	// A guest without the identity reset: its snapshot does not fork.
	adopt(t, env, "win-desk", proxmox.KindQEMU, winThin)
	w := takeDone(t, env, snapshots.Owner(), "win-desk", "no reset")
	_, err = env.Forks.Fork(ctx, snapshots.Owner(), forks.ForkRequest{Box: "win-desk", Snapshot: w.ID})
	if err == nil || !strings.Contains(err.Error(), "Taken before win-desk's image had the identity reset") {
		t.Fatalf("fork of a snapshot without the reset: %v", err)
	}
}
