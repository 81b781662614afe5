package plans_test

import (
	"context"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
	"github.com/boxsnap/boxsnap/app/snapshots/plans"
)

// TestReleasePlanRefusesAsTheRelease: an agent releases only its own
// thread's box, and another thread's reads like a made-up name; a box
// already in the trash is not released again; only the person empties the
// trash. Each dry run refuses in the real call's words, and the box stays
// as it was.
func TestReleasePlanRefusesAsTheRelease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{})
	p := plans.New(e.Core, e.Restores, e.Restores.Resets(), nil)
	p.UseReleases(boxes.ReleaseChecksOf(e.Boxes))
	_, mine, _ := e.Thread(t, "Fix the sign-in flow")
	_, other, _ := e.Thread(t, "Tidy the docs")
	b := e.Box(t, mine, "amber-fox")

	_, dryOther := p.Release(ctx, other, b.Name, false)
	_, realOther := e.Boxes.ReleaseBox(ctx, other, b.Name, "")
	_, dryMadeUp := p.Release(ctx, other, "no-such-box", false)
	if dryOther == nil || realOther == nil || dryOther.Error() != realOther.Error() || dryOther.Error() != strings.Replace(dryMadeUp.Error(), "no-such-box", b.Name, 1) {
		t.Fatalf("another thread's box: the dry run refuses %v, the release %v, a made-up box %v", dryOther, realOther, dryMadeUp)
	}
	_, dryKept := p.Release(ctx, mine, b.Name, true)
	_, realKept := e.Boxes.ReleaseBoxDeletingKept(ctx, mine, b.Name, "")
	if dryKept == nil || realKept == nil || dryKept.Error() != realKept.Error() {
		t.Fatalf("an agent's Release and delete it: the dry run refuses %v, the release %v", dryKept, realKept)
	}
	d, err := p.Release(ctx, mine, b.Name, false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Message, "amber-fox goes to the trash for ") || !strings.HasSuffix(d.Message, snapshots.NothingChangedDryWords) {
		t.Fatalf("the release's dry run says %q", d.Message)
	}
	if again, err := e.Core.Box(ctx, mine, b.Name); err != nil || again.State != snapshots.BoxReady {
		t.Fatalf("after the dry run, the box is %v (%v)", again, err)
	}

	op, err := e.Boxes.ReleaseBox(ctx, mine, b.Name, "")
	if err != nil {
		t.Fatal(err)
	}
	e.Wait(t, op)
	_, dryAgain := p.Release(ctx, mine, b.Name, false)
	_, realAgain := e.Boxes.ReleaseBox(ctx, mine, b.Name, "")
	if dryAgain == nil || realAgain == nil || dryAgain.Error() != realAgain.Error() {
		t.Fatalf("a box in the trash: the dry run refuses %v, the release %v", dryAgain, realAgain)
	}
	_, dryEmpty := p.EmptyTrash(ctx, mine, b.Name)
	_, realEmpty := e.Boxes.EmptyTrash(ctx, mine, b.Name, "")
	if dryEmpty == nil || realEmpty == nil || dryEmpty.Error() != realEmpty.Error() {
		t.Fatalf("an agent's empty: the dry run refuses %v, the empty %v", dryEmpty, realEmpty)
	}
	d, err = p.EmptyTrash(ctx, snapshots.Owner(), b.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.Message, "amber-fox and everything on it go now, and cannot be restored. ") || d.TrashHours != 0 {
		t.Fatalf("the empty's dry run says %q (%d hours)", d.Message, d.TrashHours)
	}
	if again, err := e.Core.Box(ctx, snapshots.Owner(), b.Name); err != nil || again.State != snapshots.BoxTrashed {
		t.Fatalf("after the empty's dry run, the box is %v (%v)", again, err)
	}
}
