package qemu_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/qemu"
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
	roomy(t, env)
	return env
}

// TestKeepLastsOnQEMU: Keep lasts a QEMU box's release through a
// held copy of the snapshot's disk, and is offered only where a fork can use
// it. The plan says what Keep costs and that memory is not kept; Keep is
// refused, with why, on a snapshot taken before the identity reset. The box
// is released with its kept snapshot, boxsnap is started again, and a fork
// from the kept snapshot boots and reads the file the guest wrote before the
// take, while the held copy, a file and never a domain, is still listed.
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
	box, g := bootedBox(t, env, b, "kept-owl")
	markSource(t, b, g)
	sn := takeOnQEMU(t, env, box.Name, "before the release", true)
	if sn.ForkSafe == nil || *sn.ForkSafe == 0 {
		t.Fatalf("a snapshot of a guest with the identity reset is not fork-safe: %+v", sn)
	}
	_, _, plan, err := env.Core.Plan(ctx, snapshots.Owner(), box.Name, sn.ID)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Keep.Way != providers.KeepsHeldCopy || plan.Keep.About == nil || plan.Keep.Bytes == nil || !strings.Contains(plan.Keep.Why, "not its memory") {
		t.Fatalf("the plan offers Keep as %+v; want a held copy, its cost, and that memory is not kept", plan.Keep)
	}
	keep(t, env, box.Name, sn.ID)

	// A snapshot taken before the identity reset: refused, with why.
	old, err := env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "old-owl", Kind: qemu.KindLinux, Backend: b.ID(), Template: "no-reset"})
	if err != nil {
		t.Fatalf("AcquireBox: %v", err)
	}
	oldSn := takeOnQEMU(t, env, old.Name, "before the reset", false)
	if oldSn.ForkSafe != nil && *oldSn.ForkSafe != 0 {
		t.Fatalf("a snapshot of a guest with no identity reset is fork-safe: %+v", oldSn)
	}
	_, err = env.Keeps.Keep(ctx, snapshots.Owner(), snapshots.KeepRequest{Box: old.Name, Snapshot: oldSn.ID})
	coretest.RefusedWith(t, err, providers.NoResetWords(old.Name))
	if got, _, err := env.Core.Snapshot(ctx, snapshots.Owner(), oldSn.ID); err != nil || got.KeptUntil != nil {
		t.Fatalf("a refused keep changed %s: %+v %v", oldSn.ID, got, err)
	}

	// The release makes the held copy before the box goes.
	rop, err := env.Boxes.ReleaseBox(ctx, snapshots.Owner(), box.Name, "")
	if err != nil {
		t.Fatalf("ReleaseBox: %v", err)
	}
	if got := waitOp(t, env, rop.ID); got.State != snapshots.OpDone {
		t.Fatalf("the release ended %s: %s", got.State, coretest.Deref(got.Error))
	}
	if st, err := b.Status(ctx, g); err != nil || st.Exists {
		t.Fatalf("the released box's domain: %+v %v; want gone", st, err)
	}
	copyOf := heldCopyOf(t, b, sn.ID)

	// boxsnap started again; the fork from the kept snapshot.
	env.Stop()
	env = coreOn(t, b, dsn)
	kept, _, err := env.Core.Snapshot(ctx, snapshots.Owner(), sn.ID)
	if err != nil || kept.KeptUntil == nil || kept.Guest != "held-copy" || kept.State != snapshots.StateReady {
		t.Fatalf("the kept snapshot after the release: %+v %v; want kept, ready, on its held copy", kept, err)
	}
	forkDone(t, env, box.Name, sn.ID, "kept-owl-fork")
	forkHolds(t, env, b, "kept-owl-fork", "the fork of the kept snapshot (its box released)", nil)
	if again := heldCopyOf(t, b, sn.ID); again.Ref != copyOf.Ref {
		t.Fatalf("the held copy after the fork is %+v, want %+v still", again, copyOf)
	}
}

// heldCopyOf answers the one held copy b lists of the snapshot id: whole,
// and on no domain.
func heldCopyOf(t *testing.T, b *qemu.Backend, id string) providers.HeldSnapshot {
	t.Helper()
	held, err := b.HeldSnapshots(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []providers.HeldSnapshot
	for _, h := range held {
		if h.Label.Snapshot == id {
			out = append(out, h)
		}
	}
	if len(out) != 1 || out[0].Ref.Where != "held-copy" || out[0].Incomplete || out[0].Label.KeptUntil == nil {
		t.Fatalf("the backend holds %+v of %s; want its one held copy, whole and kept", out, id)
	}
	doms, err := b.Domains(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range doms {
		if d.Ref == out[0].Ref.Guest.Ref {
			t.Fatalf("the held copy %s is a domain", d.Ref)
		}
	}
	return out[0]
}
