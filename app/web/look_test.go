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

// TestProxmoxCannotBrowse: Proxmox cannot list a snapshot's files through
// its API, so a Proxmox snapshot's Browse files… and Compare with now… are
// there, disabled, with why; the pages and the core refuse in the same
// words; and the restore dialog says nothing it cannot tell.
func TestProxmoxCannotBrowse(t *testing.T) {
	t.Parallel()
	be, _ := simulatedProxmox(t)
	s := newSite(t, coretest.Options{Extra: []snapshots.Backend{be}, Install: simInstall})
	ctx := context.Background()
	owner := snapshots.Owner()
	if _, err := s.env.Boxes.AcquireBox(ctx, owner, snapshots.BoxRequest{Name: "grey-ridge", Backend: be.ID, Kind: "lxc", Adopt: "214"}); err != nil {
		t.Fatal(err)
	}
	op, sn, err := s.env.Take.Take(ctx, owner, take.TakeRequest{Box: "grey-ridge", Name: "before"})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.env.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("take: %s", got.State)
	}
	why := "Proxmox VE (simulated) cannot list a snapshot's files through its API: restore or fork the snapshot to look inside it."
	page := html.UnescapeString(s.do(t, "GET", "/boxes/grey-ridge", nil, nil).Body.String())
	for _, item := range []string{"Browse files…", "Compare with now…"} {
		if !strings.Contains(page, `<span class="item off" aria-disabled="true">`+item+` <small>`+why+`</small></span>`) {
			t.Errorf("the row's menu does not have %s disabled with why:\n%s", item, page)
		}
	}
	for _, p := range []string{"/files", "/compare", "/file?path=etc/hosts", "/download"} {
		body := html.UnescapeString(s.do(t, "GET", "/boxes/grey-ridge/snapshots/"+sn.ID+p, nil, nil).Body.String())
		if !strings.Contains(body, why) {
			t.Errorf("%s does not refuse with why:\n%s", p, body)
		}
	}
	dlg := html.UnescapeString(s.do(t, "GET", "/boxes/grey-ridge/snapshots/"+sn.ID+"/restore", nil, nil).Body.String())
	if strings.Contains(dlg, "removed since then") || strings.Contains(dlg, "See the list") {
		t.Errorf("the restore dialog claims to know what changed on Proxmox:\n%s", dlg)
	}
	if _, err := s.env.Restores.RestoreDryRun(ctx, owner, snapshots.RestoreRequest{Box: "grey-ridge", Snapshot: sn.ID}); err != nil {
		t.Errorf("a dry run where the backend cannot tell what changed: %v", err)
	}
}
