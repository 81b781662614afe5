package qemu_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/providertest"
	"github.com/boxsnap/boxsnap/providers/qemu"
)

// TestReleaseStopsWithoutRoomOnQEMU: with the imports folder, where held
// copies go, a 16 MiB file system of its own, the plan reports its room
// and the release of a box with a kept snapshot stops saying why, before
// anything is released: the guest and both its snapshots are still there,
// no held copy was made, and the box can be released again.
func TestReleaseStopsWithoutRoomOnQEMU(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	own := providertest.NewID("rm")
	b, cfg := newBackendConfig(t, func(c *qemu.Config) { c.Install = own })
	imports := filepath.Join(cfg.Dir, "imports")
	if err := os.MkdirAll(imports, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs", imports).CombinedOutput(); err != nil {
		t.Fatalf("mount a small file system on %s: %v: %s", imports, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", imports).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", imports, err, out)
		}
	})
	env := newCoreOf(t, b, own)
	box, err := env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "cramped-owl", Kind: qemu.KindLinux, Backend: b.ID(), Template: template})
	if err != nil {
		t.Fatalf("AcquireBox: %v", err)
	}
	g := providers.Guest{Backend: b.ID(), Kind: qemu.KindLinux, Ref: box.GuestRef, Generation: 1}
	_, _, plan, err := env.Core.Plan(ctx, snapshots.Owner(), box.Name, "")
	if err != nil {
		t.Fatal(err)
	}
	if plan.Storage.FreeBytes <= 0 || plan.Storage.FreeBytes > 16<<20 || plan.Keep.Bytes == nil || *plan.Keep.Bytes <= plan.Storage.FreeBytes {
		t.Fatalf("the plan reports storage %+v and a held copy of %v bytes; want the 16 MiB room and a copy bigger than it", plan.Storage, plan.Keep.Bytes)
	}
	kept := takeOnQEMU(t, env, box.Name, "kept", false)
	plain := takeOnQEMU(t, env, box.Name, "plain", false)
	keepUntil(t, env, box.Name, kept.ID, kept.TakenAt.AddDate(0, 0, 10))

	op, err := env.Boxes.ReleaseBox(ctx, snapshots.Owner(), box.Name, "")
	if err != nil {
		t.Fatalf("ReleaseBox: %v", err)
	}
	got := waitOp(t, env, op.ID)
	want := "Release did not finish: boxsnap could not copy ‘kept’ (" + b.ID() + " has "
	if got.State != snapshots.OpFailed || !strings.HasPrefix(coretest.Deref(got.Error), want) || !strings.Contains(coretest.Deref(got.Error), " MB free, and it needs ") {
		t.Fatalf("the release with no room ended %s: %q; want failed, %q… MB free, and it needs…", got.State, coretest.Deref(got.Error), want)
	}
	t.Logf("the stopped release says: %s", coretest.Deref(got.Error))
	if st, err := b.Status(ctx, g); err != nil || !st.Exists {
		t.Fatalf("the guest after the stopped release: %+v %v; want it still there", st, err)
	}
	for _, sn := range []*snapshots.Snapshot{kept, plain} {
		now, _, err := env.Core.Snapshot(ctx, snapshots.Owner(), sn.ID)
		if err != nil || now.State != snapshots.StateReady || now.Guest == "held-copy" {
			t.Fatalf("%s after the stopped release: %+v %v; want ready on its box", sn.Name, now, err)
		}
	}
	held, err := b.HeldSnapshots(ctx)
	if err != nil || len(held) != 2 {
		t.Fatalf("the backend holds %+v (%v) after the stopped release; want the box's two snapshots", held, err)
	}
	for _, h := range held {
		if h.Ref.Where == "held-copy" {
			t.Fatalf("a held copy was made: %+v", h)
		}
	}
	if names, _ := filepath.Glob(filepath.Join(imports, "*")); len(names) != 0 {
		t.Fatalf("the stopped release left %v in the imports folder", names)
	}
	if now, err := env.Core.Box(ctx, snapshots.Owner(), box.Name); err != nil || now.State != "ready" {
		t.Fatalf("the box after the stopped release: %+v %v; want ready, to release again", now, err)
	}
}
