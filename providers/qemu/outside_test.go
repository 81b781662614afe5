package qemu_test

import (
	"context"
	"strings"
	"testing"

	"github.com/digitalocean/go-libvirt"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/sweeps"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers/qemu"
)

// TestOutsideRevertOnQEMU: the outside-restore scan notices on a QEMU box
// what a person at the host did with libvirt, as virsh does: a revert to an
// older snapshot of the running guest is logged restored outside boxsnap,
// once however many scans follow; a second revert to the same snapshot is
// logged again; a revert of the stopped guest (which leaves libvirt no
// "from snapshot" state reason) is logged too; a snapshot taken with
// libvirt is logged as its snapshots changed outside boxsnap, once, and so
// is its delete with libvirt.
// boxsnap's own takes, restore and delete are never logged as outside, and a take
// between a revert and the scan hides nothing.
func TestOutsideRevertOnQEMU(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBackend(t)
	env := newCore(t, b)
	box, g := bootedBox(t, env, b, "outside-owl")
	take := func(name string) *snapshots.Snapshot {
		t.Helper()
		op, sn, err := env.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: box.Name, Name: name})
		if err != nil {
			t.Fatalf("take %s: %v", name, err)
		}
		if got := env.Wait(t, op); got.State != snapshots.OpDone {
			t.Fatalf("take %s ended %s: %s", name, got.State, coretest.Deref(got.Error))
		}
		rec, _, err := env.Core.Snapshot(ctx, snapshots.Owner(), sn.ID)
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	older := take("older")
	newer := take("newer")
	scan := func() sweeps.OutsideReport {
		t.Helper()
		rep, err := env.Sweeps.ScanOutside(ctx)
		if err != nil {
			t.Fatalf("ScanOutside: %v", err)
		}
		return rep
	}
	counts := func() map[string]int {
		t.Helper()
		log, err := env.Boxes.BoxLog(ctx, snapshots.Owner(), box.Name, 200)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, ev := range log {
			out[ev.Kind]++
		}
		return out
	}
	want := func(what string, restored, changed int) {
		t.Helper()
		c := counts()
		if c[snapshots.EvRestoredOutside] != restored || c[snapshots.EvChangedOutside] != changed {
			t.Fatalf("%s: the box log has %d restored outside and %d changed outside (%v), want %d and %d",
				what, c[snapshots.EvRestoredOutside], c[snapshots.EvChangedOutside], c, restored, changed)
		}
	}
	scan()
	want("after boxsnap's own takes", 0, 0)

	// boxsnap's own restore is never logged as outside.
	restoreThroughTheCore(t, env, box.Name, older.ID)
	scan()
	scan()
	want("after boxsnap's own restore", 0, 0)

	// A revert to the older snapshot with libvirt directly, the guest
	// running, as `virsh snapshot-revert` does it.
	l := virsh(t)
	d, err := l.DomainLookupByName(g.Ref)
	if err != nil {
		t.Fatal(err)
	}
	revert := func(ref string) {
		t.Helper()
		s, err := l.DomainSnapshotLookupByName(d, ref, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.DomainRevertToSnapshot(s, 0); err != nil {
			t.Fatalf("revert to %s: %v", ref, err)
		}
	}
	running(t, b, g)
	revert(newer.Ref)
	if rep := scan(); rep.Restored != 1 {
		t.Fatalf("a revert made outside boxsnap: %+v", rep)
	}
	scan()
	want("after an outside revert and two scans", 1, 0)
	log, err := env.Boxes.BoxLog(ctx, snapshots.Owner(), box.Name, 200)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range log {
		if ev.Kind == snapshots.EvRestoredOutside {
			for _, w := range []string{qemu.TaskRevert + " to ‘newer’ (" + newer.ID + ")", g.Ref, "first seen at"} {
				if !strings.Contains(ev.Words, w) {
					t.Fatalf("restored outside words %q lack %q", ev.Words, w)
				}
			}
		}
	}

	// A second revert to the same snapshot, later, is logged again, though
	// boxsnap took a snapshot of the box (as automatic history does) before
	// the scan.
	revert(newer.Ref)
	take("after the revert")
	scan()
	want("after a second outside revert to the same snapshot and a take", 2, 0)

	// A revert of the stopped guest: libvirt leaves it no "from snapshot"
	// state reason, and it is seen all the same.
	if err := l.DomainDestroy(d); err != nil {
		t.Fatal(err)
	}
	scan()
	want("after a stop", 2, 0)
	revert(older.Ref)
	if _, reason, err := l.DomainGetState(d, 0); err == nil {
		t.Logf("the stopped guest's state reason after the revert: %d (from snapshot is %d)", reason, libvirt.DomainShutoffFromSnapshot)
	}
	scan()
	want("after an outside revert of the stopped guest", 3, 0)

	// A snapshot taken with libvirt: its snapshots changed, once.
	if _, err := l.DomainSnapshotCreateXML(d, "<domainsnapshot><name>by-hand</name></domainsnapshot>", 0); err != nil {
		t.Fatal(err)
	}
	scan()
	scan()
	want("after a snapshot taken outside boxsnap", 3, 1)

	// boxsnap's own delete is not logged as outside; a delete with libvirt
	// is, once.
	dop, err := env.Keeps.Delete(ctx, snapshots.Owner(), snapshots.DeleteRequest{Box: box.Name, Snapshot: older.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got := env.Wait(t, dop); got.State != snapshots.OpDone {
		t.Fatalf("the delete ended %s: %s", got.State, coretest.Deref(got.Error))
	}
	scan()
	want("after boxsnap's own delete", 3, 1)
	s, err := l.DomainSnapshotLookupByName(d, "by-hand", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.DomainSnapshotDelete(s, 0); err != nil {
		t.Fatal(err)
	}
	scan()
	scan()
	want("after a snapshot deleted outside boxsnap", 3, 2)
}
