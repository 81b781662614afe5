package web

import (
	"context"
	"html"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/qemu"
)

// TestRestoreDialogSaysWhatIsInNeither: where the undo is taken while the
// box runs, before its stop (the local backend's capture order), the
// restore dialog says what the box writes between that snapshot and its
// stop is in neither; where the undo is taken once the box is stopped
// (Proxmox's, not on ZFS, and QEMU's, to a disk snapshot or to one with
// memory), it says nothing of the kind, and a memory restore's says the
// processes running now end.
func TestRestoreDialogSaysWhatIsInNeither(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dialogOf := func(s *site, box string, memory bool) string {
		t.Helper()
		name := "before"
		if memory {
			name = "before, with memory"
		}
		op, sn, err := s.env.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: box, Name: name, Memory: memory})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.env.Wait(t, op); got.State != snapshots.OpDone {
			t.Fatalf("take on %s: %s: %s", box, got.State, coretest.Deref(got.Error))
		}
		return html.UnescapeString(s.do(t, "GET", "/boxes/"+box+"/snapshots/"+sn.ID+"/restore", nil, nil).Body.String())
	}
	dialog := func(s *site, box string) string {
		t.Helper()
		return dialogOf(s, box, false)
	}
	const gap = "What %s writes between that snapshot and its stop, a moment later, is in neither."
	local := newSite(t, coretest.Options{})
	local.env.Box(t, snapshots.Owner(), "amber-fox")
	if d := dialog(local, "amber-fox"); !strings.Contains(d, "Take a snapshot of it first, so you can undo this.") ||
		!strings.Contains(d, strings.Replace(gap, "%s", "amber-fox", 1)) {
		t.Fatalf("the local restore's dialog does not say what is in neither:\n%s", d)
	}
	be, _ := simulatedProxmox(t)
	pve := newSite(t, coretest.Options{Extra: []snapshots.Backend{be}, Install: simInstall})
	if _, err := pve.env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "grey-ridge", Backend: be.ID, Kind: "lxc", Adopt: "214"}); err != nil {
		t.Fatalf("adopt grey-ridge: %v", err)
	}
	if d := dialog(pve, "grey-ridge"); !strings.Contains(d, "Take a snapshot of it, once stopped, so you can undo this.") || strings.Contains(d, "is in neither") {
		t.Fatalf("the Proxmox restore's dialog, whose undo is taken once stopped:\n%s", d)
	}

	q := qemuBackend(t)
	qs := newSite(t, coretest.Options{Extra: []snapshots.Backend{{ID: q.ID(), Kind: "qemu", Label: q.ID(), Snap: q, Boxes: q}}, Install: simInstall})
	// This machine's disk, which other work fills, holds the backend's
	// folder: the room setting at its highest lets the takes run.
	settings, err := qs.env.Core.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	settings.RoomPercent = snapshots.MaxRoomPercent
	if err := qs.env.Core.SaveSettings(ctx, snapshots.Owner(), settings); err != nil {
		t.Fatal(err)
	}
	box, err := qs.env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "still-fjord", Kind: qemu.KindLinux, Backend: q.ID(), Template: "busybox"})
	if err != nil {
		t.Fatalf("AcquireBox: %v", err)
	}
	const ends = "Every process running in it now ends."
	for _, memory := range []bool{false, true} {
		if memory {
			// Its memory is taken while it runs.
			g := providers.Guest{Backend: q.ID(), Kind: qemu.KindLinux, Ref: box.GuestRef, Generation: 1}
			if on, err := q.Runs(ctx, g); err != nil || !on {
				if err := q.Start(ctx, g); err != nil {
					t.Fatal(err)
				}
			}
		}
		d := dialogOf(qs, "still-fjord", memory)
		if !strings.Contains(d, "Take a snapshot of it, once stopped, so you can undo this.") || strings.Contains(d, "is in neither") {
			t.Fatalf("the QEMU restore's dialog (memory %v), whose undo is taken once stopped:\n%s", memory, d)
		}
		if strings.Contains(d, ends) != memory {
			t.Fatalf("the QEMU restore's dialog (memory %v) says %q %v:\n%s", memory, ends, strings.Contains(d, ends), d)
		}
	}
}
