package qemu_test

import (
	"context"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers/providertest"
	"github.com/boxsnap/boxsnap/providers/qemu"
)

// keepUntil keeps (or renews) the snapshot sn of box until until through
// the core, waits for the keep to end done, and answers the keep date the
// core recorded (the end of until's day).
func keepUntil(t *testing.T, env *coretest.Env, box, sn string, until time.Time) time.Time {
	t.Helper()
	op, err := env.Keeps.Keep(context.Background(), snapshots.Owner(), snapshots.KeepRequest{Box: box, Snapshot: sn, Until: &until})
	if err != nil {
		t.Fatalf("Keep until %v: %v", until, err)
	}
	if got := waitOp(t, env, op.ID); got.State != snapshots.OpDone {
		t.Fatalf("the keep until %v ended %s: %s", until, got.State, coretest.Deref(got.Error))
	}
	got, _, err := env.Core.Snapshot(context.Background(), snapshots.Owner(), sn)
	if err != nil || got.KeptUntil == nil {
		t.Fatalf("after the keep until %v: %+v %v", until, got, err)
	}
	return *got.KeptUntil
}

// TestKeepDateSurvivesOnQEMU: a keep date set and then renewed on a
// snapshot of a box that stays, and one renewed after its box's release on
// its held copy, are written on their labels: with boxsnap's records lost
// (a fresh database, the same install ID, the same libvirtd), the
// reconcile finds each kept until its latest date, not its first, nor
// unkept.
func TestKeepDateSurvivesOnQEMU(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	own := providertest.NewID("kd")
	b, _ := newBackendConfig(t, func(c *qemu.Config) { c.Install = own })
	env := newCoreOf(t, b, own)
	day := time.Now().UTC().Truncate(time.Second)
	first, renewed, after := day.Add(10*24*time.Hour), day.Add(20*24*time.Hour), day.Add(30*24*time.Hour)

	box, err := env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "staying-owl", Kind: qemu.KindLinux, Backend: b.ID(), Template: template})
	if err != nil {
		t.Fatalf("AcquireBox: %v", err)
	}
	staying := takeOnQEMU(t, env, box.Name, "kept on its box", false)
	firstAt := keepUntil(t, env, box.Name, staying.ID, first)
	renewed = keepUntil(t, env, box.Name, staying.ID, renewed)
	if renewed.Equal(firstAt) {
		t.Fatalf("the renewal recorded the first keep date %v again", firstAt)
	}

	released := keptAndReleased(t, env, b, "released-owl")
	after = keepUntil(t, env, "released-owl", released.ID, after)
	env.Stop()

	fresh := newCoreOf(t, b, own)
	if _, err := fresh.Sweeps.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		id   string
		want time.Time
	}{{"the snapshot renewed on its box", staying.ID, renewed}, {"the held copy renewed after the release", released.ID, after}} {
		sn, _, err := fresh.Core.Snapshot(ctx, snapshots.Owner(), c.id)
		if err != nil {
			t.Fatalf("%s after the records were lost: %v", c.name, err)
		}
		if sn.KeptUntil == nil || !sn.KeptUntil.Equal(c.want) {
			t.Fatalf("%s came back kept until %v, want %v", c.name, sn.KeptUntil, c.want)
		}
	}
}
