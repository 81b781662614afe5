package web

import (
	"context"
	"html"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
)

// TestRestoreDialogSaysWhatIsInNeither: where the undo is taken while the
// box runs, before its stop (the local backend's capture order), the
// restore dialog says what the box writes between that snapshot and its
// stop is in neither; where the undo is taken once the box is stopped
// (Proxmox's, not on ZFS), it says nothing of the kind.
func TestRestoreDialogSaysWhatIsInNeither(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dialog := func(s *site, box string) string {
		t.Helper()
		op, sn, err := s.env.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: box, Name: "before"})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.env.Wait(t, op); got.State != snapshots.OpDone {
			t.Fatalf("take on %s: %s", box, got.State)
		}
		return html.UnescapeString(s.do(t, "GET", "/boxes/"+box+"/snapshots/"+sn.ID+"/restore", nil, nil).Body.String())
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
}
