package web

import (
	"context"
	"html"
	"net/url"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
)

// TestTakeDialogCountsWhatTheLimitCounts: the take dialog's count is the
// per-box limit's (undos and automatic snapshots apart, kept ones
// counted), and at the limit it says the person's take is refused, as the
// core then refuses it.
func TestTakeDialogCountsWhatTheLimitCounts(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{})
	ctx := context.Background()
	owner := snapshots.Owner()
	b := s.env.Box(t, owner, "amber-fox")
	take := func(name string) *snapshots.Snapshot {
		t.Helper()
		op, sn, err := s.env.Take.Take(ctx, owner, take.TakeRequest{Box: "amber-fox", Name: name})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.env.Wait(t, op); got.State != snapshots.OpDone {
			t.Fatalf("take %s: %s", name, got.State)
		}
		return sn
	}
	dialog := func() string {
		t.Helper()
		return html.UnescapeString(s.do(t, "GET", "/boxes/amber-fox/take", nil, nil).Body.String())
	}
	first := take("one")
	take("two")
	kop, err := s.env.Keeps.Keep(ctx, owner, snapshots.KeepRequest{Box: "amber-fox", Snapshot: first.ID, Days: 30})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.env.Wait(t, kop); got.State != snapshots.OpDone {
		t.Fatalf("keep: %s", got.State)
	}
	for i := 0; i < 3; i++ {
		op, _, err := s.env.Take.TakeAutomatic(ctx, b.ID, "the box changed")
		if err != nil {
			t.Fatal(err)
		}
		if got := s.env.Wait(t, op); got.State != snapshots.OpDone {
			t.Fatalf("automatic take: %s", got.State)
		}
	}
	// Two saved, one of them kept, and three automatic: 2 of 5.
	if d := dialog(); !strings.Contains(d, "amber-fox has 2 of 5.") {
		t.Fatalf("the take dialog does not count 2 of 5 (kept counted, automatic apart):\n%s", d)
	}
	for _, n := range []string{"three", "four", "five"} {
		take(n)
	}
	if d := dialog(); !strings.Contains(d, "amber-fox has 5 of 5: delete one before taking another.") {
		t.Fatalf("the take dialog at the limit does not say the take is refused:\n%s", d)
	}
	r := s.do(t, "POST", "/boxes/amber-fox/take", url.Values{"name": {"six"}}, nil)
	if body := html.UnescapeString(r.Body.String()); !strings.Contains(body, "amber-fox has 5 of 5 snapshots.") {
		t.Fatalf("the person's sixth is not refused with the limit's words (%d):\n%s", r.Code, body)
	}
}
