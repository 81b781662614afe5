package proxmox_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
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
	n, err := boxLockNotice(ctx, env.Core, "amber-fox")
	must(t, err)
	if n != "" {
		t.Fatalf("during boxsnap's own take the box shows %q", n)
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
	if n, err := boxLockNotice(ctx, env.Core, "amber-fox"); err != nil || n != "" {
		t.Fatalf("after the takes: notice %q, %v", n, err)
	}
	must(t, e.sim.SetLock(lxcThin, "backup"))
	n, err = boxLockNotice(ctx, env.Core, "amber-fox")
	must(t, err)
	want := "pve-lab left amber-fox locked (backup). Run pct unlock 214 on pve-1."
	if n != want {
		t.Fatalf("a lock the host left: %q; want %q", n, want)
	}
	if _, _, err := env.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: "amber-fox", Name: "third"}); err == nil || !strings.Contains(err.Error(), "Run pct unlock 214") {
		t.Fatalf("a take on a guest the host left locked: %v", err)
	}
}

// boxLockNotice answers what the box page says of a lock its host left on
// the box's guest: "" while one of boxsnap's operations runs on the box,
// and the words with the host's command only when a lock is seen on two
// reads of the guest with none running.
func boxLockNotice(ctx context.Context, core *snapshots.Service, boxRef string) (string, error) {
	b, err := core.Box(ctx, snapshots.Owner(), boxRef)
	if err != nil {
		return "", err
	}
	be, err := core.Backend(b.BackendID)
	if err != nil {
		return "", err
	}
	_, err = core.PlanNow(ctx, b, be, nil)
	var locked *providers.LockedError
	if !errors.As(err, &locked) {
		return "", nil
	}
	return snapshots.LockedWords(be.Label, b.Name, locked.Lock.Lock, locked.Lock.Fix), nil
}
