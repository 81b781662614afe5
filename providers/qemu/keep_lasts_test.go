package qemu_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/qemu"
	"github.com/boxsnap/boxsnap/providers/qemu/qemutest"
)

// coreOn starts a core on the database at dsn with b as its backend; a
// second call on the same dsn is boxsnap started again.
func coreOn(t *testing.T, b *qemu.Backend, dsn string) *coretest.Env {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dsn+" pool_max_conns=12")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	env, err := coretest.Build(ctx, pool, coretest.Options{Install: "intest", LocalRoot: t.TempDir(), NoTrash: true,
		Extra: []snapshots.Backend{{ID: b.ID(), Kind: "qemu", Label: b.ID(), Snap: b, Boxes: b}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Stop)
	return env
}

// TestKeepLastsOnQEMU: Keep is offered only where a fork can use it after
// the release, and a QEMU box's snapshots live in its disk and go with it,
// so Keep is refused with why, for a snapshot taken before the identity
// reset as for any, and the plan says so; nothing is kept. What lasts the release is a fork:
// with boxsnap started again, a fork of the snapshot boots holding the file
// the guest wrote before the take, and still holds it once the source is
// released and its snapshots are gone.
func TestKeepLastsOnQEMU(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, _ := newBackendConfig(t, func(c *qemu.Config) {
		// A second template, whose guest carries no identity reset.
		tpl := c.Templates[template]
		tpl.ResetVersion = 0
		c.Templates["no-reset"] = tpl
	})
	dsn := dbtest.NewDSN(t)
	env := coreOn(t, b, dsn)
	box, err := env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "kept-owl", Kind: qemu.KindLinux, Backend: b.ID(), Template: template})
	if err != nil {
		t.Fatalf("AcquireBox: %v", err)
	}
	g := providers.Guest{Backend: b.ID(), Kind: qemu.KindLinux, Ref: box.GuestRef, Generation: 1}
	boot(t, b, g)
	sh(t, b, g, "printf 'written before the take' > /root/state && sync")
	sn := takeOnQEMU(t, env, box.Name, "before the release", false)
	if sn.ForkSafe == nil || *sn.ForkSafe == 0 {
		t.Fatalf("a snapshot of a guest with the identity reset is not fork-safe: %+v", sn)
	}
	_, err = env.Keeps.Keep(ctx, snapshots.Owner(), snapshots.KeepRequest{Box: box.Name, Snapshot: sn.ID})
	coretest.RefusedWith(t, err, snapshots.CannotBeKeptWords(box.Name))
	_, _, plan, err := env.Core.Plan(ctx, snapshots.Owner(), box.Name, sn.ID)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Keep.Way != providers.KeepsNo || !strings.Contains(plan.Keep.Why, "release") {
		t.Fatalf("the plan offers Keep as %+v; want none, saying the release deletes the snapshots", plan.Keep)
	}

	// A snapshot taken before the identity reset: refused alike.
	old, err := env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "old-owl", Kind: qemu.KindLinux, Backend: b.ID(), Template: "no-reset"})
	if err != nil {
		t.Fatalf("AcquireBox: %v", err)
	}
	oldSn := takeOnQEMU(t, env, old.Name, "before the reset", false)
	if oldSn.ForkSafe != nil && *oldSn.ForkSafe != 0 {
		t.Fatalf("a snapshot of a guest with no identity reset is fork-safe: %+v", oldSn)
	}
	_, err = env.Keeps.Keep(ctx, snapshots.Owner(), snapshots.KeepRequest{Box: old.Name, Snapshot: oldSn.ID})
	coretest.RefusedWith(t, err, snapshots.CannotBeKeptWords(old.Name))
	for _, id := range []string{sn.ID, oldSn.ID} {
		if got, _, err := env.Core.Snapshot(ctx, snapshots.Owner(), id); err != nil || got.KeptUntil != nil {
			t.Fatalf("a refused keep changed %s: %+v %v", id, got, err)
		}
	}

	// boxsnap started again; the fork, then the source's release.
	env.Stop()
	env = coreOn(t, b, dsn)
	op, err := env.Forks.Fork(ctx, snapshots.Owner(), fork.ForkRequest{Box: box.Name, Snapshot: sn.ID, Name: "kept-owl-fork"})
	if err != nil {
		t.Fatalf("Fork: %v", err)
	}
	if got := waitOp(t, env, op.ID); got.State != snapshots.OpDone {
		t.Fatalf("the fork ended %s: %s", got.State, coretest.Deref(got.Error))
	}
	forked, err := env.Core.Box(ctx, snapshots.Owner(), "kept-owl-fork")
	if err != nil {
		t.Fatal(err)
	}
	fg := providers.Guest{Backend: b.ID(), Kind: qemu.KindLinux, Ref: forked.GuestRef, Generation: forked.Generation}
	running(t, b, fg)
	wctx, cancel := context.WithTimeout(ctx, bootWait)
	defer cancel()
	if _, err := qemutest.WaitBoot(wctx, b.ConsoleLog(fg), 0); err != nil {
		t.Fatalf("the fork's boot: %v", err)
	}
	rop, err := env.Boxes.ReleaseBox(ctx, snapshots.Owner(), box.Name, "")
	if err != nil {
		t.Fatalf("ReleaseBox: %v", err)
	}
	if got := waitOp(t, env, rop.ID); got.State != snapshots.OpDone {
		t.Fatalf("the release ended %s: %s", got.State, coretest.Deref(got.Error))
	}
	held, err := b.HeldSnapshots(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range held {
		if h.Label.Snapshot == sn.ID {
			t.Fatalf("the released box's snapshot is still held: %+v", h)
		}
	}
	if got := strings.TrimSpace(sh(t, b, fg, "cat /root/state")); got != "written before the take" {
		t.Fatalf("the fork, its source released, holds %q, want the file written before the take", got)
	}
}
