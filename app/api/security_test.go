package api_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// TestAgentCannotRunHostCommands: an agent's token makes a box only from a
// box template the owner made, by name. A command, a host path as a
// template, or any backend field is refused in words, nothing runs, and no
// box or folder is made.
func TestAgentCannotRunHostCommands(t *testing.T) {
	t.Parallel()
	e := setup(t)
	token, _ := e.agent(t, "Attacker")
	pwned := filepath.Join(t.TempDir(), "pwned")
	for _, c := range []struct {
		body  map[string]any
		code  int
		words string
	}{
		{map[string]any{"name": "x", "command": "id > " + pwned}, 403, "An agent makes a box only from a box template, by name: leave out command."},
		{map[string]any{"name": "x", "template": "blank", "command": "id > " + pwned}, 403, "An agent makes a box only from a box template, by name: leave out command."},
		{map[string]any{"name": "etc-copy", "template": "/etc/ssh"}, 404, "No box template by that name: the owner makes box templates on the Settings page."},
		{map[string]any{"name": "etc-copy", "template": "../../../etc"}, 404, "No box template by that name: the owner makes box templates on the Settings page."},
		{map[string]any{"name": "x"}, 400, "An agent makes a box only from a box template, by name: name one in template."},
		{map[string]any{"name": "x", "template": "blank", "backend": "local"}, 403, "An agent makes a box only from a box template, by name: leave out backend."},
		{map[string]any{"name": "x", "template": "blank", "kind": "lxc"}, 403, "An agent makes a box only from a box template, by name: leave out kind."},
		{map[string]any{"name": "x", "template": "blank", "host": "pve-1"}, 403, "An agent makes a box only from a box template, by name: leave out host."},
		{map[string]any{"name": "x", "template": "blank", "screenUrl": "http://169.254.169.254/"}, 403, "An agent makes a box only from a box template, by name: leave out screenUrl."},
	} {
		a := e.call(t, "POST", "/boxes", token, c.body).must(t, c.code)
		if a.errorWords() != c.words {
			t.Errorf("%v: %q, want %q", c.body, a.errorWords(), c.words)
		}
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("an agent's command ran on the host")
	}
	boxes, err := e.Boxes.List(context.Background(), snapshots.Owner())
	if err != nil || len(boxes) != 0 {
		t.Fatalf("refused requests made %d boxes (%v)", len(boxes), err)
	}
	if entries, _ := os.ReadDir(filepath.Join(e.Local.Root(), "boxes")); len(entries) != 0 {
		t.Fatalf("refused requests left %d folders", len(entries))
	}
	// From a template by name, the box is made, in the agent's own thread.
	a := e.call(t, "POST", "/boxes", token, map[string]any{"name": "made-well", "template": "blank"}).must(t, 201)
	if a.str("name") != "made-well" {
		t.Fatalf("made from a template: %s", a.Raw)
	}
}

// TestAgentCannotAdoptOrReleaseOthers: only the person adopts; an agent
// releases only its own thread's boxes, and another thread's box, or the
// person's machine, answers exactly as a made-up name does, and stays.
func TestAgentCannotAdoptOrReleaseOthers(t *testing.T) {
	t.Parallel()
	e := setup(t)
	tokA, _ := e.agent(t, "Thread A")
	tokB, _ := e.agent(t, "Thread B")
	e.call(t, "POST", "/boxes", tokA, map[string]any{"name": "a-box", "template": "blank"}).must(t, 201)
	e.call(t, "POST", "/boxes", tokB, map[string]any{"name": "b-box", "template": "blank"}).must(t, 201)
	e.call(t, "POST", "/boxes", e.owner, map[string]any{"name": "work-pc"}).must(t, 201)
	ctx := context.Background()
	bBox, err := e.Core.Box(ctx, snapshots.Owner(), "b-box")
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []map[string]any{
		{"name": "steal", "adopt": bBox.GuestRef},
		{"name": "steal", "template": "blank", "adopt": bBox.GuestRef},
		{"name": "steal", "adopt": "214", "backend": "pve-demo", "kind": "lxc"},
	} {
		a := e.call(t, "POST", "/boxes", tokA, body).must(t, 403)
		if w := a.errorWords(); w != "An agent makes a box only from a box template, by name: leave out adopt." {
			t.Errorf("adopt %v: %q", body, w)
		}
	}
	for _, other := range []string{"b-box", "work-pc", bBox.ID} {
		real := e.call(t, "POST", "/boxes/"+other+"/release", tokA, nil)
		fake := e.call(t, "POST", "/boxes/zz-made-up/release", tokA, nil)
		norm := strings.ReplaceAll(string(real.Raw), other, "zz-made-up")
		if real.Status != 404 || real.Status != fake.Status || norm != string(fake.Raw) {
			t.Errorf("releasing %s tells it from a made-up name:\nreal %d %s\nfake %d %s", other, real.Status, real.Raw, fake.Status, fake.Raw)
		}
	}
	for _, name := range []string{"b-box", "work-pc"} {
		b, err := e.Core.Box(ctx, snapshots.Owner(), name)
		if err != nil || b.State != "ready" {
			t.Fatalf("%s after another thread's release: %v %v", name, b, err)
		}
	}
	if _, err := os.Stat(e.Local.BoxDir(providers.Guest{Ref: bBox.GuestRef})); err != nil {
		t.Fatalf("b-box's folder: %v", err)
	}
	// Its own box, it releases.
	e.call(t, "POST", "/boxes/a-box/release?wait=true", tokA, nil).must(t, 200)
	// The person adopts, and releases any box.
	e.call(t, "POST", "/boxes", e.owner, map[string]any{"name": "adopted", "adopt": bBox.GuestRef}).must(t, 409)
}

// TestBoxTemplatesThroughTheAPI: the person adds, reads and removes box
// templates; a template's folder outside the templates folder is refused in
// words for the person too; an agent reads only the names it may make boxes
// from, never a command, and changes none.
func TestBoxTemplatesThroughTheAPI(t *testing.T) {
	t.Parallel()
	e := setup(t)
	token, _ := e.agent(t, "Builder")
	e.call(t, "PUT", "/templates/node-dev", e.owner, map[string]any{"backend": "local", "kind": "linux",
		"command": "sleep 1000", "env": map[string]string{"PORT": "3000"}, "limits": map[string]any{"openFiles": 256}}).must(t, 200)
	for _, c := range []struct{ source, words string }{
		{"/etc/ssh", "A box template's folder is a name inside the templates folder, not a full path."},
		{"../etc", "A box template's folder is one folder's name inside the templates folder: no slashes, no “..”."},
	} {
		a := e.call(t, "PUT", "/templates/bad", e.owner, map[string]any{"backend": "local", "kind": "linux", "source": c.source}).must(t, 400)
		if a.errorWords() != c.words {
			t.Errorf("source %q: %q", c.source, a.errorWords())
		}
	}
	e.call(t, "PUT", "/templates/bad", e.owner, map[string]any{"backend": "local", "kind": "linux", "user": "root"}).must(t, 400)
	a := e.call(t, "GET", "/templates", token, nil).must(t, 200)
	if strings.Contains(string(a.Raw), "sleep") || strings.Contains(string(a.Raw), "PORT") || !strings.Contains(string(a.Raw), `"name":"node-dev"`) {
		t.Fatalf("an agent's list of templates: %s", a.Raw)
	}
	a = e.call(t, "PUT", "/templates/mine", token, map[string]any{"backend": "local", "kind": "linux", "command": "id"}).must(t, 403)
	if a.errorWords() != "Only the person changes box templates." {
		t.Fatalf("an agent's template: %q", a.errorWords())
	}
	e.call(t, "DELETE", "/templates/node-dev", token, nil).must(t, 403)
	a = e.call(t, "GET", "/templates", e.owner, nil).must(t, 200)
	if !strings.Contains(string(a.Raw), `"command":"sleep 1000"`) {
		t.Fatalf("the person's list of templates: %s", a.Raw)
	}
	e.call(t, "DELETE", "/templates/node-dev", e.owner, nil).must(t, 204)
	e.call(t, "DELETE", "/templates/node-dev", e.owner, nil).must(t, 404)
}
