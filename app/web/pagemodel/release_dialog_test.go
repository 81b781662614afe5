package pagemodel

import (
	"context"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// ctxOnly is a request with a context and nothing else: the release
// dialog reads no values and returns nowhere of its own.
type ctxOnly struct{ ctx context.Context }

func (c ctxOnly) Context() context.Context { return c.ctx }
func (ctxOnly) FormValue(string) string    { return "" }
func (ctxOnly) Back(box string) string     { return "/boxes/" + box }

// TestReleaseDialogSaysWhatGoes: the release dialog counts the snapshots
// that go with the box and the kept ones that stay, and, where its backend
// keeps snapshots past a release, links to the Snapshots tab to keep the
// others first; the dialog of a box that is not there is refused.
func TestReleaseDialogSaysWhatGoes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{})
	owner := snapshots.Owner()
	b := e.Box(t, owner, "amber-fox")
	kept := e.TakeReady(t, owner, b.Name, "before the migration")
	e.TakeReady(t, owner, b.Name, "after the migration")
	op, err := e.Keeps.Keep(ctx, owner, snapshots.KeepRequest{Box: b.Name, Snapshot: kept.ID, Days: 30})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("keep ended %s: %s", got.State, coretest.Deref(got.Error))
	}
	_, dlg := NewBuilders(Parts{Core: e.Core, Keeps: e.Keeps, Boxes: e.Boxes, Contents: e.Contents, Heads: e.Heads, Tab: e.Tab,
		Approvals: e.Approvals, Restores: e.Restores, Forks: e.Forks, Logger: e.Logger})
	p, err := dlg.ReleaseDialog(ctxOnly{ctx}, b.Name)
	if err != nil {
		t.Fatal(err)
	}
	if p.Goes != 1 || p.Kept != 1 || p.Keepable != 1 {
		t.Errorf("goes %d, kept %d, keepable %d; want 1, 1, 1", p.Goes, p.Kept, p.Keepable)
	}
	const stays = "its kept snapshot stays, listed under it as released, until its keep date"
	if !strings.Contains(p.Message, stays) {
		t.Errorf("the dialog says %q, not that %s", p.Message, stays)
	}
	if p.KeepFirst != "/boxes/snapshots?q=amber-fox" {
		t.Errorf("Keep first links to %q, not the box's snapshots on the Snapshots tab", p.KeepFirst)
	}
	if _, err := dlg.ReleaseDialog(ctxOnly{ctx}, "no-such-box"); err == nil {
		t.Error("the release dialog of a box that is not there was built")
	} else if _, ok := snapshots.AsRefusal(err); !ok {
		t.Errorf("the release dialog of a box that is not there failed (%v), not refused", err)
	}
}
