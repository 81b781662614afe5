package qemu_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/providers"
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

// importedOnQEMU exports a snapshot of a real guest's box from another
// install's core on its own backend, releases that guest (the imported box
// keeps its ID, and so its domain's name, on the libvirtd the tests
// share), and imports the export through env's core: it answers the box
// the import made and the imported snapshot's ID, an imported qcow2 of the
// backend's own beside the box's disk.
func importedOnQEMU(t *testing.T, env *coretest.Env) (box, sn string) {
	t.Helper()
	ctx := context.Background()
	install := providertest.NewID("ks")
	src, _ := newBackendConfig(t, func(c *qemu.Config) { c.Install = install })
	from := newCoreOf(t, src, install)
	b, err := from.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "moving-owl", Kind: qemu.KindLinux, Backend: src.ID(), Template: template})
	if err != nil {
		t.Fatalf("AcquireBox: %v", err)
	}
	taken := takeOnQEMU(t, from, b.Name, "exported", false)
	ex, err := from.Contents.PlanExport(ctx, snapshots.Owner(), contents.ExportRequest{Box: b.Name, Snapshots: []string{taken.Name}})
	if err != nil {
		t.Fatalf("PlanExport: %v", err)
	}
	var file bytes.Buffer
	if _, err := ex.WriteTo(ctx, &file); err != nil {
		t.Fatalf("export: %v", err)
	}
	if err := src.Release(ctx, providers.Guest{Backend: src.ID(), Kind: qemu.KindLinux, Ref: b.GuestRef, Generation: 1}); err != nil {
		t.Fatalf("release the source's guest: %v", err)
	}
	res := importFile(t, env, "moving-owl.boxsnap", file.Bytes())
	if len(res.Snapshots) != 1 || res.Snapshots[0].ID != taken.ID {
		t.Fatalf("the import answered %+v, want the snapshot %s", res, taken.ID)
	}
	got, _, err := env.Core.Snapshot(ctx, snapshots.Owner(), taken.ID)
	if err != nil || !strings.HasPrefix(got.Ref, "imported/") {
		t.Fatalf("the imported snapshot is %+v (%v), want an imported qcow2", got, err)
	}
	return res.BoxName, taken.ID
}

// TestKeepDateSurvivesOnQEMU: a keep date set and then renewed on a
// snapshot of a box that stays, one renewed after its box's release on
// its held copy, and one set on a snapshot that came in by import (its own
// qcow2 in the backend's imports folder), are written on their labels:
// with boxsnap's records lost (a fresh database, the same install ID, the
// same libvirtd), the reconcile finds each kept until its latest date, not
// its first, nor unkept.
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
	importedBox, imported := importedOnQEMU(t, env)
	importedUntil := keepUntil(t, env, importedBox, imported, day.Add(40*24*time.Hour))
	env.Stop()

	fresh := newCoreOf(t, b, own)
	if _, err := fresh.Sweeps.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		id   string
		want time.Time
	}{{"the snapshot renewed on its box", staying.ID, renewed}, {"the held copy renewed after the release", released.ID, after},
		{"the imported snapshot kept on its box", imported, importedUntil}} {
		sn, _, err := fresh.Core.Snapshot(ctx, snapshots.Owner(), c.id)
		if err != nil {
			t.Fatalf("%s after the records were lost: %v", c.name, err)
		}
		if sn.KeptUntil == nil || !sn.KeptUntil.Equal(c.want) {
			t.Fatalf("%s came back kept until %v, want %v", c.name, sn.KeptUntil, c.want)
		}
	}
}
