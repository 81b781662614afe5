package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
)

// TestSetAsHead: a snapshot's row menu offers "Set as head" on every ready
// snapshot but the head; posting it makes that snapshot the head with no
// restore, says so, and the box page's Head fact and Now row follow.
func TestSetAsHead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSite(t, coretest.Options{})
	s.env.Box(t, snapshots.Owner(), "amber-fox")
	var taken []*snapshots.Snapshot
	for _, name := range []string{"cp01", "cp02"} {
		op, sn, err := s.env.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: "amber-fox", Name: name})
		if err != nil {
			t.Fatal(err)
		}
		s.env.Wait(t, op)
		taken = append(taken, sn)
	}
	cp01, cp02 := taken[0], taken[1]
	action := func(sn *snapshots.Snapshot) string {
		return `action="/boxes/amber-fox/snapshots/` + sn.ID + `/head"`
	}
	body := s.do(t, "GET", "/boxes/amber-fox", nil, nil).Body.String()
	if !strings.Contains(body, action(cp01)) || strings.Contains(body, action(cp02)) || !strings.Contains(body, "Set as head: cp01, of amber-fox") {
		t.Fatal("the box page does not offer Set as head on cp01 alone")
	}
	if !strings.Contains(body, "‘cp02’: its next snapshot is taken from it.") {
		t.Fatal("the box page does not say cp02 is the head")
	}
	w := s.do(t, "POST", "/boxes/amber-fox/snapshots/"+cp01.ID+"/head", url.Values{"back": {"/boxes/amber-fox"}}, nil)
	if w.Code != http.StatusSeeOther {
		t.Fatalf("Set as head answered %d:\n%s", w.Code, w.Body)
	}
	l, err := s.env.Heads.BoxLineage(ctx, snapshots.Owner(), "amber-fox")
	if err != nil || l.Head == nil || l.Head.ID != cp01.ID {
		t.Fatalf("after Set as head the head is %+v (%v), want cp01", l.Head, err)
	}
	body = s.do(t, "GET", "/boxes/amber-fox", nil, nil).Body.String()
	if !strings.Contains(body, "‘cp01’: its next snapshot is taken from it.") || strings.Contains(body, action(cp01)) || !strings.Contains(body, action(cp02)) {
		t.Fatal("after Set as head the box page does not follow")
	}
	if !strings.Contains(body, "the head is now ‘cp01’") {
		t.Fatal("the box's history does not say the head was set")
	}
	// The Now row does not compare the box with a head chosen without a
	// restore; the next take moves the head on, and it compares again.
	if !strings.Contains(body, "amber-fox as it is now. Its head ‘cp01’ was chosen without a restore") {
		t.Fatal("the Now row does not say the head was chosen without a restore")
	}
	op, _, err := s.env.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: "amber-fox", Name: "cp03"})
	if err != nil {
		t.Fatal(err)
	}
	s.env.Wait(t, op)
	if body = s.do(t, "GET", "/boxes/amber-fox", nil, nil).Body.String(); strings.Contains(body, "was chosen without a restore") || !strings.Contains(body, "‘cp03’: its next snapshot is taken from it.") {
		t.Fatal("after a take the Now row or the Head fact still speak of the chosen head")
	}
}
