package qemu_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/providertest"
	"github.com/boxsnap/boxsnap/providers/qemu"
	"github.com/boxsnap/boxsnap/providers/qemu/qemutest"
)

// readAccess is the guest's read of its access: its access disk, uncached
// (a guest brought back from memory holds the snapshot's in its page
// cache), its thread's line.
func readAccess(t *testing.T, b *qemu.Backend, g providers.Guest) string {
	t.Helper()
	out := sh(t, b, g, "dd if=/dev/vdb iflag=direct bs=65536 count=1 2>/dev/null | tr -d '\\000' | grep '^BOXSNAP_THREAD='")
	return strings.TrimPrefix(strings.TrimSpace(out), "BOXSNAP_THREAD=")
}

// TestAccessFirstInTheGuest: the box's access reaches the guest before
// anything runs in it after a restore. After a memory restore, which brings
// back the snapshot's processes and page cache, and after a disk restore,
// whose guest boots again, the guest's first read of its access sees
// today's, never the snapshot's; the access disk is in no snapshot.
func TestAccessFirstInTheGuest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBackend(t)
	box := providertest.NewID("bx")
	g := newGuest(t, b, box)
	if got := readAccess(t, b, g); got != "" {
		t.Fatalf("a new box's guest reads the thread %q, want none", got)
	}
	if !strings.Contains(sh(t, b, g, "dd if=/dev/vdb iflag=direct bs=65536 count=1 2>/dev/null | tr -d '\\000'"), "BOXSNAP_BOX="+box+"\n") {
		t.Fatal("a new box's guest does not read its box on its access disk")
	}
	if !strings.Contains(sh(t, b, g, "cat /tmp/boxsnap-access"), "BOXSNAP_BOX="+box+"\n") {
		t.Fatal("a new box's guest's init did not read its box from its access disk at boot")
	}
	access := func(thread string) providers.Access {
		return providers.Access{Box: providers.BoxIdentity{ID: box, Name: box, Kind: qemu.KindLinux, Install: "intest"}, Thread: thread, Generation: 1}
	}
	if _, err := b.SetStraight(ctx, g, access("th-then")); err != nil {
		t.Fatalf("SetStraight: %v", err)
	}
	if got := readAccess(t, b, g); got != "th-then" {
		t.Fatalf("the guest reads the thread %q, want th-then", got)
	}
	// The guest's page cache holds the access of the snapshot's time too.
	sh(t, b, g, "cat /dev/vdb > /dev/null")
	withMemory, _, _ := take(t, b, g, box, true)
	disk, _, _ := take(t, b, g, box, false)

	// The access is written before the guest runs again: before the memory
	// revert, which resumes it, and before the start after a disk revert.
	for _, c := range []struct {
		ref    providers.SnapshotRef
		before providers.RestoreStep
	}{{withMemory, providers.StepRollback}, {disk, providers.StepStart}} {
		plan, err := b.PlanSnapshots(ctx, g, &c.ref)
		if err != nil {
			t.Fatal(err)
		}
		o := plan.Restore.Order
		if a, s := slices.Index(o, providers.StepAccess), slices.Index(o, c.before); a < 0 || a > s {
			t.Errorf("the restore's order %v does not write the access before its %s", o, c.before)
		}
	}
	restoreWith(t, b, g, box, withMemory, access("th-now"))
	if got := readAccess(t, b, g); got != "th-now" {
		t.Errorf("after a memory restore the guest's first read of its access sees the thread %q, want today's th-now", got)
	}
	boots := len(qemutest.Boots(b.ConsoleLog(g)))
	restoreWith(t, b, g, box, disk, access("th-later"))
	wctx, cancel := context.WithTimeout(ctx, bootWait)
	defer cancel()
	if _, err := qemutest.WaitBoot(wctx, b.ConsoleLog(g), boots); err != nil {
		t.Fatalf("the guest's boot after the disk restore: %v", err)
	}
	if got := readAccess(t, b, g); got != "th-later" {
		t.Errorf("after a disk restore the guest's first read of its access sees the thread %q, want today's th-later", got)
	}
	if got := sh(t, b, g, "grep '^BOXSNAP_THREAD=' /tmp/boxsnap-access"); strings.TrimSpace(got) != "BOXSNAP_THREAD=th-later" {
		t.Errorf("after a disk restore the guest's init read the access %q at its boot, want today's th-later", got)
	}
	// Nothing else changes it: the access disk is in no snapshot.
	restoreWith(t, b, g, box, withMemory, access("th-later"))
	if got := readAccess(t, b, g); got != "th-later" {
		t.Errorf("after a second memory restore the guest reads the thread %q, want th-later", got)
	}
}
