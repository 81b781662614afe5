package qemu_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/providertest"
	"github.com/boxsnap/boxsnap/providers/qemu"
)

// newCoreOf starts a core on a fresh database with b as its backend, under
// its own install ID, so the reconcile lists this test's guests alone on the
// libvirtd the tests share.
func newCoreOf(t *testing.T, b *qemu.Backend, install string) *coretest.Env {
	t.Helper()
	env, err := coretest.Build(context.Background(), dbtest.New(t), coretest.Options{Install: install, LocalRoot: t.TempDir(), NoTrash: true,
		Extra: []snapshots.Backend{{ID: b.ID(), Kind: "qemu", Label: b.ID(), Snap: b, Boxes: b}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Stop)
	roomy(t, env)
	return env
}

// takeOnQEMU takes a snapshot of the box through the core, with the
// guest's memory or not, and answers its record once ready.
func takeOnQEMU(t *testing.T, env *coretest.Env, box, name string, memory bool) *snapshots.Snapshot {
	t.Helper()
	ctx := context.Background()
	op, sn, err := env.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: box, Name: name, Memory: memory})
	if err != nil {
		t.Fatalf("take %s: %v", name, err)
	}
	if got := waitOp(t, env, op.ID); got.State != snapshots.OpDone {
		t.Fatalf("take %s ended %s: %s", name, got.State, coretest.Deref(got.Error))
	}
	sn, _, err = env.Core.Snapshot(ctx, snapshots.Owner(), sn.ID)
	if err != nil {
		t.Fatal(err)
	}
	return sn
}

// TestOrphansQuarantinedOnQEMU: with boxsnap's records lost while it is
// stopped (a fresh database, the same install ID, the same libvirtd), the
// next start's reconcile finds every snapshot of the QEMU guest from its
// label, each holding what it held (disk, or disk and memory), and deletes
// none; each found snapshot shows the file the guest wrote before its take,
// and a second reconcile records nothing again. A second box's kept
// snapshot, its box released, lives on as a held copy: it comes back kept,
// on its held copy, and shows its files; its delete then removes the copy.
func TestOrphansQuarantinedOnQEMU(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	own := providertest.NewID("in")
	b, _ := newBackendConfig(t, func(c *qemu.Config) { c.Install = own })
	env := newCoreOf(t, b, own)
	box, err := env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "lost-owl", Kind: qemu.KindLinux, Backend: b.ID(), Template: template})
	if err != nil {
		t.Fatalf("AcquireBox: %v", err)
	}
	g := providers.Guest{Backend: b.ID(), Kind: qemu.KindLinux, Ref: box.GuestRef, Generation: 1}
	boot(t, b, g)
	written := map[string]string{}
	var taken []*snapshots.Snapshot
	for _, memory := range []bool{false, true} {
		state := fmt.Sprintf("written before the take with memory %v", memory)
		sh(t, b, g, "printf '"+state+"' > /root/state && sync")
		sn := takeOnQEMU(t, env, box.Name, fmt.Sprintf("memory %v", memory), memory)
		written[sn.ID] = state
		taken = append(taken, sn)
	}
	kept := keptAndReleased(t, env, b, "gone-owl")
	env.Stop()

	fresh := newCoreOf(t, b, own)
	rep, err := fresh.Sweeps.Reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Found != len(taken) || rep.Kept != 1 || rep.Lost != 0 || rep.Incomplete != 0 {
		t.Fatalf("reconcile of a fresh database: %+v; want %d found, one kept, none lost or incomplete", rep, len(taken))
	}
	for _, was := range taken {
		sn, _, err := fresh.Core.Snapshot(ctx, snapshots.Owner(), was.ID)
		if err != nil {
			t.Fatalf("%s after the records were lost: %v", was.Name, err)
		}
		if !sn.Found || sn.State != snapshots.StateReady || sn.Ref != was.Ref || sn.Holds != was.Holds || sn.KeptUntil != nil {
			t.Fatalf("%s came back as %+v; want found, ready, holding %s", was.Name, sn, was.Holds)
		}
		shown, err := fresh.Contents.ShowFile(ctx, snapshots.Owner(), sn.ID, "root/state")
		if err != nil {
			t.Fatalf("show the found %s's file: %v", was.Name, err)
		}
		if shown.Text != written[sn.ID] {
			t.Fatalf("the found %s shows %q, want %q", was.Name, shown.Text, written[sn.ID])
		}
	}
	held, err := b.HeldSnapshots(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(held) != len(taken)+1 {
		t.Fatalf("the backend holds %d snapshots after the reconcile, want all %d and the held copy", len(held), len(taken))
	}
	found, _, err := fresh.Core.Snapshot(ctx, snapshots.Owner(), kept.ID)
	if err != nil {
		t.Fatalf("the kept snapshot after the records were lost: %v", err)
	}
	if found.KeptUntil == nil || found.Guest != "held-copy" || found.State != snapshots.StateReady {
		t.Fatalf("the kept snapshot came back as %+v; want kept, ready, on its held copy", found)
	}
	shown, err := fresh.Contents.ShowFile(ctx, snapshots.Owner(), found.ID, "etc/passwd")
	if err != nil || !strings.Contains(shown.Text, "root:") {
		t.Fatalf("the held copy's etc/passwd: %+v %v", shown, err)
	}
	rep, err = fresh.Sweeps.Reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Kept+rep.Found+rep.Recorded+rep.Lost != 0 {
		t.Fatalf("a second reconcile recorded again: %+v", rep)
	}
	// A kept snapshot is deleted only once its keep date passes: its
	// held copy's delete, as that expiry asks it of the backend, twice.
	for range 2 {
		if err := b.DeleteSnapshot(ctx, snapshots.RefOf(found, nil), nil); err != nil {
			t.Fatalf("delete the held copy: %v", err)
		}
	}
	if held, err := b.HeldSnapshots(ctx); err != nil || len(held) != len(taken) {
		t.Fatalf("after the held copy's delete the backend holds %+v (%v); want the %d snapshots of the box alone", held, err, len(taken))
	}
}

// keptAndReleased makes a box named name on b, its guest never started,
// takes a snapshot of it, keeps it and releases the box, and answers the
// snapshot's record: it lives on as a held copy.
func keptAndReleased(t *testing.T, env *coretest.Env, b *qemu.Backend, name string) *snapshots.Snapshot {
	t.Helper()
	ctx := context.Background()
	box, err := env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: name, Kind: qemu.KindLinux, Backend: b.ID(), Template: template})
	if err != nil {
		t.Fatalf("AcquireBox: %v", err)
	}
	sn := takeOnQEMU(t, env, box.Name, "kept", false)
	keep(t, env, box.Name, sn.ID)
	rop, err := env.Boxes.ReleaseBox(ctx, snapshots.Owner(), box.Name, "")
	if err != nil {
		t.Fatalf("ReleaseBox: %v", err)
	}
	if got := waitOp(t, env, rop.ID); got.State != snapshots.OpDone {
		t.Fatalf("the release ended %s: %s", got.State, coretest.Deref(got.Error))
	}
	sn, _, err = env.Core.Snapshot(ctx, snapshots.Owner(), sn.ID)
	if err != nil || sn.Guest != "held-copy" {
		t.Fatalf("the kept snapshot after its box's release: %+v %v; want it on its held copy", sn, err)
	}
	return sn
}
