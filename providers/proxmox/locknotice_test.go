package proxmox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers/proxmox"
)

// TestLockNoticeOnlyWhenIdle: during boxsnap's own take, whose task holds the
// guest's lock, the box shows that work's step and no lock notice, and a take
// asked meanwhile waits its turn rather than being told to run pct unlock; a
// lock the host left, seen with nothing of boxsnap's running, is said with
// the host's command.
func TestLockNoticeOnlyWhenIdle(t *testing.T) {
	t.Parallel()
	e := newSim(t, simOpts{durations: map[string]time.Duration{"vzsnapshot": 800 * time.Millisecond}})
	env := newCore(t, e, "", nil)
	ctx := context.Background()
	b := adopt(t, env, "amber-fox", proxmox.KindLXC, lxcThin)
	op, _, err := env.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: "amber-fox", Name: "first"})
	must(t, err)
	waitFor(t, "the take's task to hold the guest's lock", func() bool {
		g, _ := e.sim.Guest(lxcThin)
		return g.Lock == "snapshot"
	})
	n, err := env.Core.BoxLockNotice(ctx, snapshots.Owner(), "amber-fox")
	must(t, err)
	if n != nil {
		t.Fatalf("during boxsnap's own take the box shows %q", n.Words)
	}
	running, err := env.Core.RunningOn(ctx, b)
	must(t, err)
	if running == nil || running.ID != op.ID || running.Step != snapshots.StepSnapshot {
		t.Fatalf("the work running on the box: %+v; want the take at its snapshot step", running)
	}
	second, _, err := env.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: "amber-fox", Name: "second"})
	if err != nil {
		t.Fatalf("a take asked during boxsnap's own take was refused: %v", err)
	}
	for _, o := range []*snapshots.Operation{op, second} {
		if got := env.Wait(t, o); got.State != snapshots.OpDone {
			t.Fatalf("take: %s %s", got.State, deref(got.Error))
		}
	}
	if n, err := env.Core.BoxLockNotice(ctx, snapshots.Owner(), "amber-fox"); err != nil || n != nil {
		t.Fatalf("after the takes: notice %+v, %v", n, err)
	}
	must(t, e.sim.SetLock(lxcThin, "backup"))
	n, err = env.Core.BoxLockNotice(ctx, snapshots.Owner(), "amber-fox")
	must(t, err)
	want := "pve-lab left amber-fox locked (backup). Run pct unlock 214 on pve-1."
	if n == nil || n.Words != want {
		t.Fatalf("a lock the host left: %+v; want %q", n, want)
	}
	if _, _, err := env.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: "amber-fox", Name: "third"}); err == nil || !strings.Contains(err.Error(), "Run pct unlock 214") {
		t.Fatalf("a take on a guest the host left locked: %v", err)
	}
}
