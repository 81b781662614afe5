package web

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/qemu"
	"github.com/boxsnap/boxsnap/providers/qemu/qemutest"
)

// memoryBox is the take dialog's "With its memory" box.
const memoryBox = `name="memory"`

// TestTakeDialogOffersMemoryWhereThePlanDoes: the take dialog offers "With
// its memory" where the box's plan says its guest can give it now: a
// running QEMU guest and a Proxmox VM, not a stopped QEMU guest (its take
// with memory is refused: it has none) nor a Proxmox container.
func TestTakeDialogOffersMemoryWhereThePlanDoes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := qemuBackend(t)
	pve, _ := simulatedProxmox(t)
	s := newSite(t, coretest.Options{NoWorkers: true, Install: simInstall, Extra: []snapshots.Backend{pve,
		{ID: q.ID(), Kind: "qemu", Label: q.ID(), Snap: q, Boxes: q}}})
	for _, g := range []struct{ vmid, name, kind string }{{"215", "quiet-owl", "qemu"}, {"214", "grey-ridge", "lxc"}} {
		if _, err := s.env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: g.name, Backend: pve.ID, Kind: g.kind, Adopt: g.vmid}); err != nil {
			t.Fatalf("adopt %s: %v", g.name, err)
		}
	}
	box, err := s.env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "still-fjord", Kind: qemu.KindLinux, Backend: q.ID(), Template: "busybox"})
	if err != nil {
		t.Fatalf("AcquireBox: %v", err)
	}
	g := providers.Guest{Backend: q.ID(), Kind: qemu.KindLinux, Ref: box.GuestRef, Generation: 1}
	if on, err := q.Runs(ctx, g); err != nil || on {
		if err := q.Stop(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	offers := func(name string) bool {
		t.Helper()
		page := s.do(t, "GET", "/boxes/"+name+"/take", nil, nil).Body.String()
		if !strings.Contains(page, "Take snapshot") {
			t.Fatalf("no take dialog for %s:\n%s", name, page)
		}
		return strings.Contains(page, memoryBox)
	}
	if offers("still-fjord") {
		t.Errorf("the take dialog of a stopped QEMU guest offers its memory, which it does not have")
	}
	if !offers("quiet-owl") {
		t.Errorf("the take dialog of a Proxmox VM does not offer its memory")
	}
	if offers("grey-ridge") {
		t.Errorf("the take dialog of a Proxmox container offers its memory")
	}
	if err := q.Start(ctx, g); err != nil {
		t.Fatal(err)
	}
	if !offers("still-fjord") {
		t.Errorf("the take dialog of a running QEMU guest does not offer its memory")
	}
}

// qemuBackend is a QEMU backend on the tests' libvirtd, of install
// simInstall, with the tests' guest as its "busybox" template; its guests
// are released at the test's end.
func qemuBackend(t *testing.T) *qemu.Backend {
	t.Helper()
	d := qemutest.Libvirtd(t)
	files := qemutest.Guest(t)
	dir, err := os.MkdirTemp("", "bsq-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	q, err := qemu.New(qemu.Config{ID: "qemu-test", Socket: d.Socket, Install: simInstall, Dir: dir,
		Templates: map[string]qemu.Template{"busybox": {Kernel: files.Kernel, Initrd: files.Initrd, Disk: files.Disk,
			Cmdline: files.Cmdline, MemoryMiB: 256, CPUs: 1, ResetVersion: qemutest.ResetVersion}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		list, _ := q.Domains(context.Background())
		for _, g := range list {
			if err := q.Release(context.Background(), g); err != nil {
				t.Errorf("release %s at the test's end: %v", g.Ref, err)
			}
		}
		_ = q.Close()
	})
	return q
}
