package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/api"
)

// hostsAndOwners reads the hosts with when each was marked gone, and the
// host that owns each box.
const hostsAndOwners = `SELECT (SELECT string_agg(name || ' ' || coalesce(gone_at::text, '-'), ', ' ORDER BY name) FROM hosts)
	|| ' / ' || (SELECT string_agg(name || ' ' || coalesce(owner_host, '-'), ', ' ORDER BY name) FROM boxes)`

// TestAgentReachesNoHost: the Security model makes listing hosts, moving
// a box, marking a host gone and taking its boxes over the owner's alone.
// An agent's token asking any of them, for its own box and for a host
// marked gone long ago, is refused with forbidden in words, and nothing
// changes (the box stays on its host, the gone host keeps its boxes); no
// tool over JSON or MCP names a host at all.
func TestAgentReachesNoHost(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	token, agent := e.agent(t, "Move away")
	e.Box(t, agent, "amber-fox")
	e.TakeReady(t, agent, "amber-fox", "one")
	if _, err := e.Pool.Exec(ctx, `INSERT INTO hosts (name, first_seen_at, last_seen_at, gone_at, gone_by)
		VALUES ('host-b', now() - interval '30 days', now() - interval '30 days', now() - interval '29 days', 'person')`); err != nil {
		t.Fatal(err)
	}
	// host-b's box, which a takeover would carry here.
	e.Box(t, agent, "birch-wren")
	if _, err := e.Pool.Exec(ctx, `UPDATE boxes SET owner_host = 'host-b' WHERE name = 'birch-wren'`); err != nil {
		t.Fatal(err)
	}
	this := e.Hosts.This()
	for _, tc := range []struct {
		method, path string
		body         any
		words        string
	}{
		{"GET", "/hosts", nil, "Only the person sees the hosts."},
		{"POST", "/boxes/amber-fox/move", map[string]any{"host": "host-b"}, "Only the person moves boxes between hosts and takes hosts over."},
		{"POST", "/boxes/birch-wren/move", map[string]any{"host": this}, "Only the person moves boxes between hosts and takes hosts over."},
		{"POST", "/hosts/host-b/gone", nil, "Only the person moves boxes between hosts and takes hosts over."},
		{"POST", "/hosts/" + this + "/gone", nil, "Only the person moves boxes between hosts and takes hosts over."},
		{"POST", "/hosts/host-b/takeover", map[string]any{"to": this}, "Only the person moves boxes between hosts and takes hosts over."},
		{"POST", "/hosts/host-b/takeover", nil, "Only the person moves boxes between hosts and takes hosts over."},
	} {
		before := shotOf(t, e)
		var hostsBefore string
		if err := e.Pool.QueryRow(ctx, hostsAndOwners).Scan(&hostsBefore); err != nil {
			t.Fatal(err)
		}
		a := e.call(t, tc.method, tc.path, token, tc.body)
		if a.Status != 403 || a.errorCode() != "forbidden" || a.errorWords() != tc.words {
			t.Errorf("an agent's %s %s: %d %s, want 403 forbidden saying %q", tc.method, tc.path, a.Status, a.Raw, tc.words)
		}
		sameShot(t, tc.method+" "+tc.path, before, shotOf(t, e))
		var hostsAfter string
		if err := e.Pool.QueryRow(ctx, hostsAndOwners).Scan(&hostsAfter); err != nil {
			t.Fatal(err)
		}
		if hostsAfter != hostsBefore {
			t.Errorf("an agent's %s %s changed the hosts: %s, was %s", tc.method, tc.path, hostsAfter, hostsBefore)
		}
	}
	for _, name := range api.ToolNames() {
		if strings.Contains(name, "host") || strings.Contains(name, "move") || strings.Contains(name, "takeover") {
			t.Errorf("the tool %s reaches hosts, which only the person may", name)
		}
	}
	ses, err := mcpSession(t, e.srv.URL, token)
	if err != nil {
		t.Fatal(err)
	}
	defer ses.Close()
	listed, err := ses.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range listed.Tools {
		if strings.Contains(tl.Name, "host") || strings.Contains(tl.Name, "move") {
			t.Errorf("MCP lists %s, which reaches hosts", tl.Name)
		}
	}
}
