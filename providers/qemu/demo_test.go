package qemu_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/demo"
	"github.com/boxsnap/boxsnap/app/snapshots"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/qemu"
	"github.com/boxsnap/boxsnap/providers/qemu/qemutest"
)

// TestCachedTestGuestIsTheTestsGuest: the demo's guest, found in the cache
// without building it, is a guest the tests built, booted with their
// command line and identity reset's version.
func TestCachedTestGuestIsTheTestsGuest(t *testing.T) {
	t.Parallel()
	files := qemutest.Guest(t)
	cache, err := qemutest.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := qemu.CachedTestGuest(cache, 256)
	if err != nil {
		t.Fatalf("CachedTestGuest after the tests built it: %v", err)
	}
	// A cache shared by worktrees may hold guests of other scripts too:
	// the demo boots whichever was built last.
	dir := filepath.Dir(tpl.Kernel)
	if filepath.Dir(dir) != filepath.Join(cache, "qemu-guest") || tpl.Initrd != filepath.Join(dir, "initrd.img") || tpl.Disk != filepath.Join(dir, "base.qcow2") {
		t.Errorf("the cached guest is %+v, not one the tests built in %s", tpl, cache)
	}
	if tpl.Cmdline != files.Cmdline || tpl.ResetVersion != qemutest.ResetVersion || tpl.MemoryMiB != 256 {
		t.Errorf("the cached guest boots with %q, reset %d, %d MiB; the tests' with %q, reset %d", tpl.Cmdline, tpl.ResetVersion, tpl.MemoryMiB, files.Cmdline, qemutest.ResetVersion)
	}
	if _, err := qemu.CachedTestGuest(t.TempDir(), 256); err != qemu.ErrNoCachedGuest {
		t.Errorf("an empty cache answers %v, want ErrNoCachedGuest", err)
	}
}

// TestQEMUDemoSeeds: the demo saves the busybox-qemu box template and makes
// one box from it, once, on the guest the tests built; the box boots and
// takes a snapshot as any other.
func TestQEMUDemoSeeds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, cfg := newBackendConfig(t)
	cache, err := qemutest.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	qemutest.Guest(t)
	tpl, err := qemu.CachedTestGuest(cache, 256)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Templates = map[string]qemu.Template{demo.QEMUTemplate: tpl}
	b, err := qemu.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	env := newCore(t, b)
	for range 2 {
		if err := demo.SeedQEMU(ctx, env.Boxes, b, env.Logger); err != nil {
			t.Fatalf("SeedQEMU: %v", err)
		}
	}
	list, err := env.Boxes.List(ctx, snapshots.Owner())
	if err != nil {
		t.Fatal(err)
	}
	var made []*snapshots.Box
	for _, x := range list {
		if x.BackendID == b.ID() {
			made = append(made, x)
		}
	}
	if len(made) != 1 || made[0].Name != "still-fjord" {
		t.Fatalf("the demo made %d QEMU boxes, want still-fjord once", len(made))
	}
	g := providers.Guest{Backend: b.ID(), Kind: qemu.KindLinux, Ref: made[0].GuestRef, Generation: 1}
	boot(t, b, g)
	op, _, err := env.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: made[0].Name, Name: "first", Memory: true})
	if err != nil {
		t.Fatalf("take: %v", err)
	}
	if got := env.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("the demo box's take ended %s: %s", got.State, coretest.Deref(got.Error))
	}
}
