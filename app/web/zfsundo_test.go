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

// TestZFSUndoNotice: after a restore on ZFS (its undo a held copy), the
// box's page shows the restore's notice with Undo, and Undo opens the undo's
// dialog, which says it makes a new guest from that copy and how many
// snapshots stay on the earlier guest.
func TestZFSUndoNotice(t *testing.T) {
	t.Parallel()
	be, _ := simulatedProxmoxZFS(t, true)
	s := newSite(t, coretest.Options{Extra: []snapshots.Backend{be}, Install: simInstall})
	ctx := context.Background()
	if _, err := s.env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "river-elk", Backend: be.ID, Kind: "lxc", Adopt: "221"}); err != nil {
		t.Fatalf("adopt river-elk: %v", err)
	}
	var newest *snapshots.Snapshot
	for _, name := range []string{"first", "second", "newest"} {
		op, sn, err := s.env.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: "river-elk", Name: name})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.env.Wait(t, op); got.State != snapshots.OpDone {
			t.Fatalf("take %s: %s", name, got.State)
		}
		newest = sn
	}
	want := "Undoing this makes a new guest from that copy; the 3 snapshots on its current guest stay there, fork only."
	// The restore's own dialog says so before the restore.
	if d := html.UnescapeString(s.do(t, "GET", "/boxes/river-elk/snapshots/"+newest.ID+"/restore", nil, nil).Body.String()); !strings.Contains(d, want) {
		t.Fatalf("the ZFS restore's dialog does not say %q:\n%s", want, d)
	}
	op, err := s.env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "river-elk", Snapshot: newest.ID})
	if err != nil {
		t.Fatal(err)
	}
	rop := s.env.Wait(t, op)
	if rop.State != snapshots.OpDone || rop.UndoID == nil {
		t.Fatalf("the ZFS restore: %s, undo %v", rop.State, rop.UndoID)
	}
	undo, _, err := s.env.Core.Snapshot(ctx, snapshots.Owner(), *rop.UndoID)
	if err != nil || undo.Guest != "held-copy" {
		t.Fatalf("the ZFS restore's undo: %+v, %v; want a held copy", undo, err)
	}
	// Its take is told once in the box log, with where the copy is.
	events, err := s.env.Boxes.BoxLog(ctx, snapshots.Owner(), "river-elk", 50)
	if err != nil {
		t.Fatal(err)
	}
	told := 0
	for _, ev := range events {
		if ev.Kind == snapshots.EvSnapshotTaken && ev.SnapshotID != nil && *ev.SnapshotID == undo.ID {
			told++
			if !strings.Contains(ev.Words, "the undo of this restore: held copy "+*undo.GuestRef) {
				t.Errorf("the undo's event does not say where its copy is: %s", ev.Words)
			}
		}
	}
	if told != 1 {
		t.Errorf("the undo's take is told %d times in the box log, want once", told)
	}

	page := html.UnescapeString(s.do(t, "GET", "/boxes/river-elk", nil, nil).Body.String())
	href := "/boxes/river-elk/snapshots/" + undo.ID + "/restore"
	if !strings.Contains(page, "to ‘newest’") || !strings.Contains(page, "Undo restores ‘"+undo.Name+"’, river-elk as it was just before.") || !strings.Contains(page, href) {
		t.Fatalf("the box's page has no restore notice with Undo for the ZFS restore:\n%s", page)
	}
	dialog := html.UnescapeString(s.do(t, "GET", href, nil, nil).Body.String())
	if !strings.Contains(dialog, want) {
		t.Fatalf("the undo's dialog does not say %q:\n%s", want, dialog)
	}
}
