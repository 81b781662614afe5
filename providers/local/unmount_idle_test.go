package local

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/disks"
)

// TestUnmountIdleLeavesNoMountButABoxInUse: as boxsnap stops (Close, then
// UnmountIdle), the disk image of a box whose process it ran and of a box
// nothing uses are unmounted, the box folder a file is open in stays
// mounted, and each box's files are there again at its next use.
func TestUnmountIdleLeavesNoMountButABoxInUse(t *testing.T) {
	loopOrSkip(t)
	root := t.TempDir()
	if err := Passable(root, "/"); err != nil {
		t.Fatal(err)
	}
	b, err := New(Config{Root: root, Install: "in-test", NoSync: true, StopTimeout: 2 * time.Second, DiskImages: true})
	if err != nil {
		t.Fatal(err)
	}
	unmountAtEnd(t, b)
	var gs []providers.Guest
	for _, id := range []string{"bxran", "bxidle", "bxheld"} {
		g, err := b.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: id, Kind: "linux"}, Command: "sleep 600",
			Limits: providers.BoxLimits{DiskBytes: 64 << 20}})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(b.BoxDir(g), "kept.txt"), []byte(id), 0o644); err != nil {
			t.Fatal(err)
		}
		gs = append(gs, g)
	}
	if err := b.Start(t.Context(), gs[0]); err != nil {
		t.Fatal(err)
	}
	held, err := os.Open(filepath.Join(b.BoxDir(gs[2]), "kept.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	UnmountIdle(b.Root(), b.log)
	for i, g := range gs {
		dir := b.BoxDir(g)
		if n, want := mountsAt(t, dir), map[bool]int{true: 1, false: 0}[i == 2]; n != want {
			t.Fatalf("box %s's folder has %d mounts after the stop, want %d", g.Ref, n, want)
		}
		if i < 2 && mountsAt(t, b.Path(disks.DirDisks, g.Ref+".fs")) != 0 {
			t.Fatalf("box %s's image is still mounted on its own folder after the stop", g.Ref)
		}
	}
	held.Close()
	// The next boxsnap on the data folder finds every box whole.
	next, err := New(Config{Root: root, Install: "in-test", NoSync: true, DiskImages: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gs {
		if _, err := next.Status(t.Context(), g); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(filepath.Join(next.BoxDir(g), "kept.txt")); string(got) != g.Ref {
			t.Fatalf("box %s's file reads %q at its next use", g.Ref, got)
		}
	}
}
