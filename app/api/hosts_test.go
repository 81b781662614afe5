package api_test

import (
	"context"
	"encoding/json"
	"testing"
)

// TestHostsOverTheAPI: GET /hosts lists the hosts, this one among them; a
// move of a local box to another host is refused in words while its
// snapshots are on its host only, and by an agent, who may not list the
// hosts either (their box counts hold other threads'); a host seen alive can be
// neither marked gone nor taken over. Each answer fits its schema.
func TestHostsOverTheAPI(t *testing.T) {
	t.Parallel()
	e := setup(t)
	doc := readOpenAPI(t, e)
	token, agent := e.agent(t, "Move the box")
	e.Box(t, agent, "vivid-moss")
	e.TakeReady(t, agent, "vivid-moss", "one")
	if _, err := e.Pool.Exec(context.Background(), "INSERT INTO hosts (name) VALUES ('host-b')"); err != nil {
		t.Fatal(err)
	}
	this := e.Hosts.This()

	hosts := e.call(t, "GET", "/hosts", e.owner, nil).must(t, 200)
	if hosts.str("this") != this {
		t.Fatalf("GET /hosts says this host is %q, want %q", hosts.str("this"), this)
	}
	for _, tc := range []struct {
		schema string
		a      answer
		status int
		words  string
	}{
		{"HostsAnswer", hosts, 200, ""},
		{"Error", e.call(t, "POST", "/boxes/vivid-moss/move", e.owner, map[string]any{"host": "host-b"}), 400,
			"vivid-moss's snapshots are on host " + this + " only; set a content store to move boxes between hosts."},
		{"Error", e.call(t, "POST", "/boxes/vivid-moss/move", token, map[string]any{"host": "host-b"}), 403,
			"Only the person moves boxes between hosts and takes hosts over."},
		{"Error", e.call(t, "GET", "/hosts", token, nil), 403, "Only the person sees the hosts."},
		{"Error", e.call(t, "POST", "/boxes/vivid-moss/move", e.owner, map[string]any{}), 400, ""},
		{"Error", e.call(t, "POST", "/hosts/host-b/gone", e.owner, nil), 409, ""},
		{"Error", e.call(t, "POST", "/hosts/host-b/takeover", e.owner, nil), 409, ""},
		{"Error", e.call(t, "POST", "/hosts/host-z/takeover", e.owner, map[string]any{"to": this}), 404,
			"No host named host-z has run boxsnap here; start boxsnap there with BOXSNAP_HOST=host-z first."},
	} {
		if tc.status != 0 && tc.a.Status != tc.status && !(tc.status == 400 && tc.a.Status >= 400 && tc.a.Status < 500) {
			t.Errorf("%s: status %d, want %d: %s", tc.schema, tc.a.Status, tc.status, tc.a.Raw)
		}
		if tc.words != "" && tc.a.errorWords() != tc.words {
			t.Errorf("refused with %q, want %q", tc.a.errorWords(), tc.words)
		}
		var v any
		if err := json.Unmarshal(tc.a.Raw, &v); err != nil {
			t.Fatal(err)
		}
		if err := validate(doc, doc.Components.Schemas[tc.schema], v, tc.schema); err != nil {
			t.Errorf("%s: %v\n%s", tc.schema, err, tc.a.Raw)
		}
	}
}
