package api_test

import (
	"strings"
	"testing"
)

// TestThreadsSeeNoneOfAnothersThings: through the API, a thread guessing another
// thread's snapshot and operation IDs can list, see, restore, fork, delete
// and fetch the picture of none of them, through every endpoint, tools and
// REST; and each answer reads exactly as for a made-up ID.
func TestThreadsSeeNoneOfAnothersThings(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.Pictures.Use(jpegTaker{})
	tokA, _ := e.agent(t, "Thread A")
	tokB, _ := e.agent(t, "Thread B")
	e.call(t, "POST", "/boxes", tokA, map[string]any{"name": "a-box", "template": "with-screen"}).must(t, 201)
	e.call(t, "POST", "/boxes", tokB, map[string]any{"name": "b-box", "template": "with-screen"}).must(t, 201)
	e.call(t, "POST", "/tools/box_snapshot", tokA, map[string]any{"box": "a-box", "name": "mine"}).must(t, 200)
	tb := e.call(t, "POST", "/tools/box_snapshot", tokB, map[string]any{"box": "b-box", "name": "secret plan"}).must(t, 200)
	secret, secretOp := tb.str("snapshot"), tb.str("operation")
	const fakeSn, fakeOp = "snzzzzzzzzzzzz", "opzzzzzzzzzzzz"

	// Each probe runs with the real ID and with a made-up one; {S} is the
	// snapshot, {O} the operation, {B} the other thread's box or a made-up
	// box's name.
	probes := []struct{ method, path, body string }{
		{"POST", "/tools/box_snapshots", `{"box":"{B}","pictures":true}`},
		{"POST", "/tools/box_snapshot", `{"box":"{B}"}`},
		{"POST", "/tools/box_restore", `{"box":"a-box","snapshot":"{S}","replace":true}`},
		{"POST", "/tools/box_restore", `{"box":"{B}","snapshot":"{S}","replace":true}`},
		{"POST", "/tools/box_restore", `{"box":"{B}","snapshot":"secret plan","replace":true}`},
		{"POST", "/tools/box_fork", `{"snapshot":"{S}"}`},
		{"POST", "/tools/box_fork", `{"snapshot":"{S}","name":"stolen-a"}`},
		{"POST", "/tools/box_fork", `{"box":"a-box","snapshot":"{S}"}`},
		{"POST", "/tools/box_fork", `{"box":"{B}","snapshot":"{S}"}`},
		{"POST", "/tools/box_fork", `{"box":"{B}","snapshot":"secret plan"}`},
		{"POST", "/tools/box_fork", `{"box":"{B}","name":"stolen-b"}`},
		{"POST", "/tools/box_snapshot_delete", `{"box":"a-box","snapshot":"{S}"}`},
		{"POST", "/tools/box_snapshot_delete", `{"box":"{B}","snapshot":"{S}"}`},
		{"GET", "/boxes/a-box/snapshots/{S}", ``},
		{"GET", "/boxes/{B}/snapshots/{S}", ``},
		{"GET", "/boxes/{B}/snapshots", ``},
		{"GET", "/snapshots?box={B}", ``},
		{"DELETE", "/boxes/a-box/snapshots/{S}", ``},
		{"DELETE", "/boxes/{B}/snapshots/{S}?wait=true", ``},
		{"POST", "/boxes/a-box/snapshots/{S}/restore", `{"replace":true}`},
		{"POST", "/boxes/{B}/snapshots/{S}/restore?wait=true", `{"replace":true}`},
		{"GET", "/boxes/a-box/snapshots/{S}/fork", ``},
		{"GET", "/boxes/{B}/snapshots/{S}/fork?name=stolen-c", ``},
		{"POST", "/boxes/a-box/snapshots/{S}/fork", `{}`},
		{"POST", "/boxes/{B}/snapshots/{S}/fork?wait=true", `{"name":"stolen-d"}`},
		{"POST", "/boxes/a-box/snapshots/{S}/keep", `{}`},
		{"POST", "/boxes/a-box/snapshots/{S}/unkeep", `{}`},
		{"PUT", "/boxes/a-box/snapshots/{S}/name", `{"name":"taken over"}`},
		{"PUT", "/boxes/a-box/snapshots/{S}/note", `{"note":"mine now"}`},
		{"GET", "/boxes/a-box/snapshots/{S}/picture", ``},
		{"GET", "/boxes/{B}/snapshots/{S}/picture", ``},
		{"GET", "/operations/{O}", ``},
		{"GET", "/operations/{O}?wait=true", ``},
		{"POST", "/operations/{O}/check", ``},
		{"GET", "/boxes/{B}", ``},
		{"GET", "/boxes/{B}/log", ``},
		{"POST", "/boxes/{B}/release", ``},
		{"POST", "/boxes/{B}/snapshots", `{"name":"intruder"}`},
		// Looking inside: browse, show, download, compare, lineage.
		{"GET", "/boxes/a-box/snapshots/{S}/files", ``},
		{"GET", "/boxes/{B}/snapshots/{S}/files?path=.boxsnap", ``},
		{"GET", "/boxes/{B}/snapshots/secret plan/files", ``},
		{"GET", "/boxes/{B}/snapshots/{S}/file?path=notes.txt", ``},
		{"GET", "/boxes/{B}/snapshots/{S}/download", ``},
		{"GET", "/boxes/a-box/snapshots/{S}/download?path=notes.txt", ``},
		{"GET", "/boxes/{B}/snapshots/{S}/diff", ``},
		{"GET", "/boxes/{B}/snapshots/{S}/diff?path=notes.txt", ``},
		{"GET", "/boxes/a-box/snapshots/mine/diff?against={S}", ``},
		{"GET", "/boxes/a-box/snapshots/mine/diff?against={S}&path=notes.txt", ``},
		{"GET", "/boxes/{B}/snapshots/{S}/lineage", ``},
		{"GET", "/boxes/{B}/lineage", ``},
		{"POST", "/tools/box_snapshot_diff", `{"box":"{B}","snapshot":"{S}"}`},
		{"POST", "/tools/box_snapshot_diff", `{"box":"a-box","snapshot":"{S}"}`},
		{"POST", "/tools/box_snapshot_diff", `{"box":"a-box","snapshot":"mine","against":"{S}"}`},
		{"POST", "/tools/box_restore", `{"box":"{B}","snapshot":"{S}","dry_run":true}`},
		{"POST", "/tools/box_restore", `{"box":"a-box","snapshot":"{S}","dry_run":true}`},
		{"POST", "/tools/box_snapshot_delete", `{"box":"{B}","snapshot":"{S}","dry_run":true}`},
		{"POST", "/tools/box_snapshot_delete", `{"box":"a-box","snapshot":"{S}","dry_run":true}`},
		{"DELETE", "/boxes/{B}/snapshots/{S}?dry_run=true", ``},
		{"POST", "/boxes/{B}/snapshots/{S}/restore?dry_run=true", `{"replace":true}`},
		{"POST", "/tools/box_reset", `{"box":"{B}","dry_run":true}`},
		{"POST", "/boxes/{B}/reset?dry_run=true", ``},
		{"POST", "/tools/box_undo", `{"box":"{B}","dry_run":true}`},
		{"POST", "/boxes/{B}/undo?dry_run=true", ``},
		{"POST", "/tools/box_operation", `{"operation":"{O}"}`},
		{"POST", "/tools/box_operation", `{"operation":"{O}","wait":1}`},
	}
	fill := func(s, sn, op, box string) string {
		return strings.NewReplacer("{S}", sn, "{O}", op, "{B}", box).Replace(s)
	}
	check := func(phase string) {
		t.Helper()
		for _, p := range probes {
			var realBody, fakeBody any
			if p.body != "" {
				realBody, fakeBody = fill(p.body, secret, secretOp, "b-box"), fill(p.body, fakeSn, fakeOp, "zz-box")
			}
			real := e.call(t, p.method, fill(p.path, secret, secretOp, "b-box"), tokA, realBody)
			fake := e.call(t, p.method, fill(p.path, fakeSn, fakeOp, "zz-box"), tokA, fakeBody)
			if real.Status < 400 || real.Status >= 500 {
				t.Errorf("%s: %s %s: status %d: %s", phase, p.method, p.path, real.Status, real.Raw)
				continue
			}
			norm := strings.NewReplacer(secret, fakeSn, secretOp, fakeOp, "b-box", "zz-box").Replace(string(real.Raw))
			if real.Status != fake.Status || norm != string(fake.Raw) {
				t.Errorf("%s: %s %s tells the real ID from a made-up one:\nreal %d %s\nfake %d %s", phase, p.method, p.path, real.Status, real.Raw, fake.Status, fake.Raw)
			}
		}
		// Nothing A can list names B's snapshot, operation or box.
		for _, l := range []answer{
			e.call(t, "POST", "/tools/box_snapshots", tokA, map[string]any{"pictures": true}),
			e.call(t, "GET", "/snapshots", tokA, nil),
			e.call(t, "GET", "/boxes", tokA, nil),
			e.call(t, "GET", "/boxes/a-box/log", tokA, nil),
			e.call(t, "GET", "/threads", tokA, nil),
		} {
			l.must(t, 200)
			for _, s := range []string{secret, secretOp, "secret plan", "Thread B"} {
				if strings.Contains(string(l.Raw), s) {
					t.Errorf("%s: a listing of thread A names %q: %s", phase, s, l.Raw)
				}
			}
		}
	}
	check("its own box apart")

	// Thread A runs on B's box (an execution machine for it): it sees the
	// box now, and still only what A took there, which is nothing.
	th := e.call(t, "GET", "/threads", e.owner, nil).must(t, 200)
	var idA string
	for _, x := range th.JSON["threads"].([]any) {
		if m := x.(map[string]any); m["title"] == "Thread A" {
			idA = m["id"].(string)
		}
	}
	e.call(t, "PUT", "/boxes/b-box/presence", e.owner, map[string]any{"workspaces": []any{map[string]any{"thread": idA, "working": false, "runsOn": true}}}).must(t, 200)
	a := e.call(t, "GET", "/boxes/b-box/snapshots/"+secret, tokA, nil).must(t, 404)
	contains(t, a.errorWords(), "No snapshot "+secret+" that you can see.")
	a = e.call(t, "POST", "/tools/box_snapshots", tokA, map[string]any{"box": "b-box", "pictures": true}).must(t, 200)
	if strings.Contains(string(a.Raw), secret) || strings.Contains(string(a.Raw), "secret plan") {
		t.Fatalf("thread A, running on b-box, sees B's snapshot: %s", a.Raw)
	}
	for _, p := range []struct{ method, path, body string }{
		{"POST", "/tools/box_restore", `{"box":"b-box","snapshot":"{S}","replace":true}`},
		{"POST", "/tools/box_snapshot_delete", `{"box":"b-box","snapshot":"{S}"}`},
		{"POST", "/tools/box_fork", `{"box":"b-box","snapshot":"{S}","name":"stolen-e"}`},
		{"POST", "/tools/box_fork", `{"snapshot":"{S}"}`},
		{"POST", "/boxes/b-box/snapshots/{S}/fork?wait=true", `{}`},
		{"GET", "/boxes/b-box/snapshots/{S}/fork", ``},
		{"GET", "/boxes/b-box/snapshots/{S}/picture", ``},
		{"DELETE", "/boxes/b-box/snapshots/{S}", ``},
	} {
		var rb, fb any
		if p.body != "" {
			rb, fb = fill(p.body, secret, "", ""), fill(p.body, fakeSn, "", "")
		}
		real := e.call(t, p.method, fill(p.path, secret, "", ""), tokA, rb)
		fake := e.call(t, p.method, fill(p.path, fakeSn, "", ""), tokA, fb)
		if real.Status != 404 || strings.ReplaceAll(string(real.Raw), secret, fakeSn) != string(fake.Raw) {
			t.Errorf("running on b-box, %s %s: real %d %s, fake %d %s", p.method, p.path, real.Status, real.Raw, fake.Status, fake.Raw)
		}
	}

	// Nothing was made: no fork of B's snapshot, nor of B's box, and B's
	// box log has no fork-asked.
	boxes := e.call(t, "GET", "/boxes", e.owner, nil).must(t, 200)
	if n := len(boxes.JSON["boxes"].([]any)); n != 2 || strings.Contains(string(boxes.Raw), "stolen") || strings.Contains(string(boxes.Raw), "-fork") {
		t.Errorf("after A's probes the owner sees %d boxes: %s", n, boxes.Raw)
	}
	blog := e.call(t, "GET", "/boxes/b-box/log", e.owner, nil).must(t, 200)
	if strings.Contains(string(blog.Raw), `"fork-asked"`) || strings.Contains(string(blog.Raw), `"forked"`) {
		t.Errorf("B's box log after A's probes: %s", blog.Raw)
	}
	if n := len(e.call(t, "GET", "/boxes/b-box/snapshots", e.owner, nil).must(t, 200).JSON["boxes"].([]any)[0].(map[string]any)["snapshots"].([]any)); n != 1 {
		t.Errorf("b-box has %d snapshots after A's probes", n)
	}

	// B's snapshot is whole and unchanged, and B still sees its picture.
	b := e.call(t, "GET", "/boxes/b-box/snapshots/"+secret, tokB, nil).must(t, 200)
	if b.str("name") != "secret plan" || b.str("state") != "ready" || b.JSON["note"] != nil {
		t.Fatalf("B's snapshot after A's probes: %s", b.Raw)
	}
	e.call(t, "GET", "/boxes/b-box/snapshots/"+secret+"/picture", tokB, nil).must(t, 200)
	e.call(t, "GET", "/operations/"+secretOp, tokB, nil).must(t, 200)
}
