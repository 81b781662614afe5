package api_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestAuthentication(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for _, tc := range []struct {
		header string
		words  string
	}{
		{"", "Send Authorization: Bearer and a token"},
		{"Basic dXNlcjpwYXNz", "Send Authorization: Bearer and a token"},
		{"Bearer bxt_notatoken", "That token is not valid"},
		{"Bearer bxa_notatoken", "That token is not valid"},
		{"Bearer something-else", "That token is not valid"},
	} {
		req, _ := http.NewRequest("POST", e.srv.URL+"/api/v1/tools/box_snapshots", strings.NewReader("{}"))
		if tc.header != "" {
			req.Header.Set("Authorization", tc.header)
		}
		resp, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Fatalf("%q: status %d", tc.header, resp.StatusCode)
		}
	}
	a := e.call(t, "GET", "/boxes", "bxt_wrong", nil).must(t, 401)
	contains(t, a.errorWords(), "That token is not valid: it may have been revoked, or its thread has ended.")
	if strings.Contains(string(a.Raw), "bxt_wrong") {
		t.Fatal("the answer echoes the token")
	}
	// The OpenAPI file needs no token.
	e.call(t, "GET", "/openapi.json", "", nil).must(t, 200)
}

// TestBadInput sends what a careless or hostile caller might: each is a
// 4xx in words, and nothing changes.
func TestBadInput(t *testing.T) {
	t.Parallel()
	e := setup(t)
	token, agent := e.agent(t, "Tidy the docs")
	e.Box(t, agent, "calm-glade")
	taken := e.call(t, "POST", "/tools/box_snapshot", token, map[string]any{"box": "calm-glade", "name": "first"}).must(t, 200).str("snapshot")

	long := strings.Repeat("n", 61)
	for _, tc := range []struct {
		name, method, path string
		token              string
		body               any
		status             int
		words              string
	}{
		{"name too long", "POST", "/tools/box_snapshot", token, map[string]any{"box": "calm-glade", "name": long}, 400, "A snapshot's name is at most 60 characters; this one has 61."},
		{"name blank", "PUT", "/boxes/calm-glade/snapshots/first/name", e.owner, map[string]any{"name": "  "}, 400, "A snapshot's name cannot be empty."},
		{"name with a control character", "POST", "/tools/box_snapshot", token, map[string]any{"box": "calm-glade", "name": "a\tb"}, 400, "A snapshot's name cannot hold control characters."},
		{"note over 1 KB", "POST", "/tools/box_snapshot", token, map[string]any{"box": "calm-glade", "note": strings.Repeat("x", 1025)}, 400, "A note is at most 1 KB; this one is 1025 bytes."},
		{"NUL in a note", "POST", "/tools/box_snapshot", token, `{"box":"calm-glade","note":"a\u0000b"}`, 400, "Text in a request cannot hold a NUL character."},
		{"unknown snapshot ID", "POST", "/tools/box_restore", token, map[string]any{"box": "calm-glade", "snapshot": "snaaaaaaaaaaaa", "replace": true}, 404, "No snapshot snaaaaaaaaaaaa that you can see."},
		{"unknown snapshot name", "POST", "/tools/box_snapshot_delete", token, map[string]any{"box": "calm-glade", "snapshot": "nothing"}, 404, "No snapshot named ‘nothing’ on calm-glade that you can see."},
		{"malformed ID", "GET", "/operations/op!!", token, nil, 404, "No operation op!! that you can see."},
		{"unknown box", "POST", "/tools/box_snapshot", token, map[string]any{"box": "no-such-box"}, 404, "No box no-such-box that you can see."},
		{"box missing", "POST", "/tools/box_snapshot", token, map[string]any{"name": "x"}, 400, "box is required"},
		{"replace missing", "POST", "/tools/box_restore", token, map[string]any{"box": "calm-glade", "snapshot": "first"}, 400, "box_restore needs replace: true."},
		{"replace false", "POST", "/tools/box_restore", token, map[string]any{"box": "calm-glade", "snapshot": "first", "replace": false}, 400, "box_restore needs replace: true."},
		{"replace missing, REST", "POST", "/boxes/calm-glade/snapshots/first/restore", e.owner, map[string]any{}, 400, "A restore needs replace: true."},
		{"malformed JSON", "POST", "/tools/box_snapshot", token, `{"box": "calm-glade",`, 400, "The request's body is not valid JSON"},
		{"not an object", "POST", "/tools/box_snapshot", token, `["calm-glade"]`, 400, "The request's body must be a JSON object"},
		{"two values", "POST", "/tools/box_snapshot", token, `{"box":"calm-glade"}{"box":"calm-glade"}`, 400, "more than one JSON value"},
		{"empty body", "POST", "/tools/box_snapshot", token, ``, 400, "The request's body is empty"},
		{"unknown field", "POST", "/tools/box_snapshot", token, map[string]any{"box": "calm-glade", "thread": "th000000000000"}, 400, `it does not know the field "thread"`},
		{"wrong type", "POST", "/tools/box_snapshot", token, map[string]any{"box": "calm-glade", "memory": "yes"}, 400, "memory must be true or false, not a string."},
		{"wrong type, number", "POST", "/tools/box_restore", token, map[string]any{"box": 7, "snapshot": "first", "replace": true}, 400, "box must be text, not a number."},
		{"huge body", "POST", "/tools/box_snapshot", token, `{"box":"calm-glade","note":"` + strings.Repeat("x", 70<<10) + `"}`, 413, "The request's body is over 64 KiB."},
		{"request ID too long", "POST", "/tools/box_restore", token, map[string]any{"box": "calm-glade", "snapshot": "first", "replace": true, "request": strings.Repeat("r", 101)}, 400, "request is an ID you make, at most 100 characters of text."},
		{"memory on a disk-only box", "POST", "/tools/box_snapshot", token, map[string]any{"box": "calm-glade", "memory": true}, 400, "calm-glade's snapshots hold the disk only: pass memory false."},
		{"fork: neither box nor snapshot", "POST", "/tools/box_fork", token, map[string]any{"name": "calm-copy"}, 400, "box_fork needs snapshot (its name or ID), or box to fork the box now."},
		{"fork: a snapshot's name without its box", "POST", "/tools/box_fork", token, map[string]any{"snapshot": "first"}, 400, "A snapshot's name needs its box: pass box too, or the snapshot's ID."},
		{"fork: a name with capitals", "POST", "/tools/box_fork", token, map[string]any{"box": "calm-glade", "snapshot": "first", "name": "Calm Copy"}, 400, "A box's name is 2 to 40 lowercase letters, digits and dashes, starting with a letter."},
		{"fork the box now: a name too long", "POST", "/tools/box_fork", token, map[string]any{"box": "calm-glade", "name": "c" + strings.Repeat("x", 40)}, 400, "A box's name is 2 to 40 lowercase letters"},
		{"fork the box now: a name starting with a digit", "POST", "/tools/box_fork", token, map[string]any{"box": "calm-glade", "name": "1-copy"}, 400, "A box's name is 2 to 40 lowercase letters"},
		{"fork the box now: a name in use", "POST", "/tools/box_fork", token, map[string]any{"box": "calm-glade", "name": "calm-glade"}, 409, "A box named calm-glade exists already."},
		{"fork: box blank", "POST", "/tools/box_fork", token, map[string]any{"box": "  "}, 400, "box_fork needs snapshot (its name or ID), or box to fork the box now."},
		{"fork: unknown snapshot", "POST", "/tools/box_fork", token, map[string]any{"box": "calm-glade", "snapshot": "nothing"}, 404, "No snapshot named ‘nothing’ on calm-glade that you can see."},
		{"fork: unknown snapshot ID", "POST", "/tools/box_fork", token, map[string]any{"snapshot": "snaaaaaaaaaaaa"}, 404, "No snapshot snaaaaaaaaaaaa that you can see."},
		{"fork: unknown box", "POST", "/tools/box_fork", token, map[string]any{"box": "no-such-box"}, 404, "No box no-such-box that you can see."},
		{"fork: asMachine is not the agent's", "POST", "/tools/box_fork", token, map[string]any{"box": "calm-glade", "asMachine": true}, 400, `it does not know the field "asMachine"`},
		{"fork: wrong type", "POST", "/tools/box_fork", token, map[string]any{"box": "calm-glade", "name": 3}, 400, "name must be text, not a number."},
		{"fork: request ID too long", "POST", "/tools/box_fork", token, map[string]any{"box": "calm-glade", "request": strings.Repeat("r", 101)}, 400, "request is an ID you make, at most 100 characters of text."},
		{"fork, REST: an agent as a machine", "POST", "/boxes/calm-glade/snapshots/first/fork", token, map[string]any{"asMachine": true}, 403, "Only the person forks as one of their machines"},
		{"fork, REST: a bad name", "POST", "/boxes/calm-glade/snapshots/first/fork?wait=true", e.owner, map[string]any{"name": "-copy"}, 400, "A box's name is 2 to 40 lowercase letters"},
		{"fork, REST: a name in use", "POST", "/boxes/calm-glade/snapshots/first/fork?wait=true", e.owner, map[string]any{"name": "calm-glade"}, 409, "A box named calm-glade exists already."},
		{"fork, REST: asMachine not a bool", "POST", "/boxes/calm-glade/snapshots/first/fork", e.owner, map[string]any{"asMachine": "yes"}, 400, "asMachine must be true or false, not a string."},
		{"fork, REST: wait not a bool", "POST", "/boxes/calm-glade/snapshots/first/fork?wait=soon", e.owner, map[string]any{}, 400, "wait is true or false."},
		{"fork check: a bad name", "GET", "/boxes/calm-glade/snapshots/first/fork?name=Calm", e.owner, nil, 400, "A box's name is 2 to 40 lowercase letters"},
		{"fork check: unknown snapshot", "GET", "/boxes/calm-glade/snapshots/nothing/fork", token, nil, 404, "No snapshot named ‘nothing’ on calm-glade that you can see."},
		{"unknown tool", "POST", "/tools/box_fork_everything", token, map[string]any{}, 404, "No tool named “box_fork_everything”."},
		{"keep days and until", "POST", "/boxes/calm-glade/snapshots/first/keep", e.owner, map[string]any{"days": 3, "until": "2030-01-01"}, 400, "Keep takes days or until, not both."},
		{"keep a bad date", "POST", "/boxes/calm-glade/snapshots/first/keep", e.owner, map[string]any{"until": "tomorrow"}, 400, "until is a date such as 2026-12-29."},
		{"keep too long", "POST", "/boxes/calm-glade/snapshots/first/keep", e.owner, map[string]any{"days": 400}, 400, "Keep keeps a snapshot 1 to 365 days."},
		{"an agent keeps", "POST", "/boxes/calm-glade/snapshots/first/keep", token, map[string]any{}, 403, "Only the person can keep a snapshot."},
		{"an agent renames", "PUT", "/boxes/calm-glade/snapshots/first/name", token, map[string]any{"name": "mine"}, 403, "Only the person can rename a snapshot or change its note."},
		{"an agent without undo", "POST", "/boxes/calm-glade/snapshots/first/restore", token, map[string]any{"replace": true, "noUndo": true}, 403, "Only the person restores without an undo"},
		{"an agent reports presence", "PUT", "/boxes/calm-glade/presence", token, map[string]any{"terminals": 1}, 403, "Only the platform, with the owner's token, reports presence."},
		{"an agent makes a thread", "POST", "/threads", token, map[string]any{"title": "mine"}, 403, "Only the person makes threads."},
		{"an agent reads settings", "GET", "/settings", token, nil, 403, "Only the person reads or changes settings."},
		{"settings out of range", "PUT", "/settings", e.owner, map[string]any{"perBox": 0}, 400, "Snapshots per box is 1 to 50."},
		{"negative terminals", "PUT", "/boxes/calm-glade/presence", e.owner, map[string]any{"terminals": -1}, 400, "Terminals cannot be below zero."},
		{"log limit", "GET", "/boxes/calm-glade/log?limit=0", token, nil, 400, "limit is 1 to 1000."},
		{"control character in the path", "GET", "/boxes/calm%01glade", token, nil, 400, "The request's path or query holds something that is not text."},
		{"wait not a bool", "POST", "/boxes/calm-glade/snapshots?wait=maybe", token, map[string]any{}, 400, "wait is true or false."},
		{"not JSON", "POST", "/threads", e.owner, nil, 400, "The request's body is empty"},
		{"no such endpoint", "GET", "/nothing", token, nil, 404, "No such endpoint."},
		{"method not allowed", "PATCH", "/boxes", token, nil, 405, "PATCH is not allowed here."},
	} {
		a := e.call(t, tc.method, tc.path, tc.token, tc.body)
		if a.Status != tc.status {
			t.Errorf("%s: status %d, want %d: %s", tc.name, a.Status, tc.status, a.Raw)
			continue
		}
		if !strings.Contains(a.errorWords(), tc.words) {
			t.Errorf("%s: %q does not say %q", tc.name, a.errorWords(), tc.words)
		}
		if _, ok := a.JSON["error"].(map[string]any)["try_again"]; !ok {
			t.Errorf("%s: no try_again in %s", tc.name, a.Raw)
		}
	}

	// Nothing changed: one snapshot, still named "first", with no note.
	a := e.call(t, "GET", "/boxes/calm-glade/snapshots", e.owner, nil).must(t, 200)
	sns := a.JSON["boxes"].([]any)[0].(map[string]any)["snapshots"].([]any)
	if len(sns) != 1 {
		t.Fatalf("after bad input the box has %d snapshots: %s", len(sns), a.Raw)
	}
	sn := sns[0].(map[string]any)
	if sn["id"] != taken || sn["name"] != "first" || sn["note"] != nil || sn["keptUntil"] != nil {
		t.Fatalf("after bad input the snapshot is %v", sn)
	}
	// No fork was made: calm-glade is the only box.
	a = e.call(t, "GET", "/boxes", e.owner, nil).must(t, 200)
	if n := len(a.JSON["boxes"].([]any)); n != 1 {
		t.Fatalf("after bad input there are %d boxes: %s", n, a.Raw)
	}
	a = e.call(t, "GET", "/settings", e.owner, nil).must(t, 200)
	if a.JSON["perBox"] != float64(5) {
		t.Fatalf("settings changed: %s", a.Raw)
	}
}

// TestTryAgain: a refusal that holds only for now says try_again; one
// that does not, does not.
func TestTryAgain(t *testing.T) {
	t.Parallel()
	e := setup(t)
	token, agent := e.agent(t, "Upgrade the database")
	e.Box(t, agent, "eager-heron")
	e.call(t, "POST", "/tools/box_snapshot", token, map[string]any{"box": "eager-heron", "name": "before"}).must(t, 200)
	// A terminal open on the box holds the agent's restore for now.
	e.call(t, "PUT", "/boxes/eager-heron/presence", e.owner, map[string]any{"terminals": 1}).must(t, 200)
	a := e.call(t, "POST", "/tools/box_restore", token, map[string]any{"box": "eager-heron", "snapshot": "before", "replace": true}).must(t, 409)
	contains(t, a.errorWords(), "eager-heron cannot be restored now. A terminal is open on it.")
	if !a.tryAgain() {
		t.Fatalf("the guard's refusal does not say try_again: %s", a.Raw)
	}
	a = e.call(t, "POST", "/tools/box_restore", token, map[string]any{"box": "eager-heron", "snapshot": "nothing", "replace": true}).must(t, 404)
	if a.tryAgain() {
		t.Fatalf("a missing snapshot says try_again: %s", a.Raw)
	}
}

// TestPersonRestoreForce: the CLI's --force goes past what the guard names,
// and --no-undo restores without an undo.
func TestPersonRestoreForce(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.Box(t, ownerCaller(), "grey-pine")
	e.call(t, "POST", "/boxes/grey-pine/snapshots?wait=true", e.owner, map[string]any{"name": "clean"}).must(t, 200)
	e.call(t, "PUT", "/boxes/grey-pine/presence", e.owner, map[string]any{"terminals": 2}).must(t, 200)
	a := e.call(t, "POST", "/boxes/grey-pine/snapshots/clean/restore?wait=true", e.owner, map[string]any{"replace": true}).must(t, 409)
	contains(t, a.errorWords(), "Restoring grey-pine also ends this. 2 terminals are open on it. Restore anyway to go on.")
	a = e.call(t, "POST", "/boxes/grey-pine/snapshots/clean/restore?wait=true", e.owner, map[string]any{"replace": true, "force": true, "noUndo": true}).must(t, 200)
	contains(t, a.str("message"), "Restored grey-pine to ‘clean’", "No undo was taken.")
}
