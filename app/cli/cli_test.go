package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/api"
	"github.com/boxsnap/boxsnap/app/cli"
	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// rig is a running server (the core behind the API on a real HTTP server)
// and the owner's token for it.
type rig struct {
	*coretest.Env
	url, token string
}

func setup(t *testing.T) *rig {
	t.Helper()
	e := coretest.New(t, coretest.Options{})
	r := chi.NewRouter()
	r.Mount("/api/v1", api.New(e.APIOptions()))
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	_, token, err := e.Auth.CreateAPIToken(context.Background(), "cli")
	if err != nil {
		t.Fatal(err)
	}
	return &rig{Env: e, url: srv.URL, token: token}
}

// run runs `boxsnap snapshot <args>` with env, and checks the token never
// shows.
func (g *rig) run(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errw bytes.Buffer
	code := cli.Run(context.Background(), args, cli.Env{Getenv: func(k string) string { return env[k] }}, &out, &errw)
	if strings.Contains(out.String()+errw.String(), g.token) {
		t.Fatalf("the token was printed: %s %s", out.String(), errw.String())
	}
	return code, out.String(), errw.String()
}

func (g *rig) env() map[string]string {
	return map[string]string{"BOXSNAP_SERVER": g.url, "BOXSNAP_TOKEN": g.token}
}

// ok runs a command that must succeed and returns its output.
func (g *rig) ok(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errw := g.run(t, g.env(), args...)
	if code != cli.ExitOK {
		t.Fatalf("boxsnap snapshot %s: exit %d: %s%s", strings.Join(args, " "), code, out, errw)
	}
	return out
}

func says(t *testing.T, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Fatalf("%q does not say %q", got, w)
		}
	}
}

var snapshotID = regexp.MustCompile(`\bsn[a-z0-9]{12}\b`)

func TestCLIEndToEnd(t *testing.T) {
	t.Parallel()
	g := setup(t)
	b := g.Box(t, snapshots.Owner(), "amber-fox")
	file := filepath.Join(g.Local.BoxDir(providers.Guest{Ref: b.GuestRef}), "app.conf")
	if err := os.WriteFile(file, []byte("v1"), 0o644); err != nil {
		t.Fatal(err)
	}

	out := g.ok(t, "take", "amber-fox", "--name", "before the upgrade", "--note", "v1 config")
	says(t, out, "Took ‘before the upgrade’ (", ") of amber-fox in ", "It holds the disk", "1 of 5 for this box.")
	first := snapshotID.FindString(out)
	out = g.ok(t, "take", "--name", "second/try", "amber-fox")
	says(t, out, "Took ‘second/try’", "2 of 5 for this box.")

	// list: a table in words, and --json the API's answer.
	out = g.ok(t, "list")
	says(t, out, "amber-fox: 2 of 5 for this box", "NAME", "before the upgrade", first, "by a boxsnap command", "second/try")
	out = g.ok(t, "list", "amber-fox", "--json")
	var listed struct {
		Boxes []struct {
			Snapshots []struct {
				ID   string  `json:"id"`
				Name string  `json:"name"`
				Note *string `json:"note"`
			} `json:"snapshots"`
		} `json:"boxes"`
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil || len(listed.Boxes) != 1 || len(listed.Boxes[0].Snapshots) != 2 {
		t.Fatalf("list --json: %v %s", err, out)
	}
	says(t, g.ok(t, "list", "--kept"), "No kept snapshots.")

	// rename (a name with a slash), note, keep and unkeep.
	says(t, g.ok(t, "rename", "amber-fox", "second/try", "third/try"), "Renamed sn", " to ‘third/try’.")
	says(t, g.ok(t, "note", "amber-fox", "third/try", "try the new flags"), "Saved the note of ‘third/try’.")
	says(t, g.ok(t, "note", "amber-fox", "third/try", ""), "Cleared the note of ‘third/try’.")
	says(t, g.ok(t, "keep", "amber-fox", first, "--days", "10"), "Kept ‘before the upgrade’ until ")
	says(t, g.ok(t, "list", "--kept"), "before the upgrade", "until ")
	says(t, g.ok(t, "unkeep", "amber-fox", "before the upgrade"), "‘before the upgrade’ is no longer kept: it goes with amber-fox again.")

	// restore needs --replace; then it restores with an undo.
	if err := os.WriteFile(file, []byte("v2"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errw := g.run(t, g.env(), "restore", "amber-fox", "before the upgrade")
	if code != cli.ExitRefused {
		t.Fatalf("restore without --replace: exit %d", code)
	}
	says(t, errw, "boxsnap snapshot restore: a restore replaces everything on amber-fox since the snapshot: pass --replace to say so")
	out = g.ok(t, "restore", "amber-fox", "before the upgrade", "--replace")
	says(t, out, "Restored amber-fox to ‘before the upgrade’", "Undo restores ‘before the restore at ")
	if got, _ := os.ReadFile(file); string(got) != "v1" {
		t.Fatalf("after the restore the file holds %q", got)
	}

	// delete says what it freed.
	says(t, g.ok(t, "delete", "amber-fox", "third/try"), "Deleted ‘third/try’ of amber-fox")

	// The box log says these were a boxsnap command's.
	events, err := g.Boxes.BoxLog(context.Background(), snapshots.Owner(), "amber-fox", 50)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if (ev.Kind == snapshots.EvSnapshotTaken || ev.Kind == snapshots.EvSnapshotDeleted) && ev.ActorKind != "cli" {
			t.Fatalf("%s recorded as by %s, not by a boxsnap command", ev.Kind, ev.ActorKind)
		}
	}
}

func TestCLIRefusals(t *testing.T) {
	t.Parallel()
	g := setup(t)
	g.Box(t, snapshots.Owner(), "brisk-lake")
	g.ok(t, "take", "brisk-lake", "--name", "only")
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(g.token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		env   map[string]string
		args  []string
		code  int
		words string
	}{
		{"no such snapshot", g.env(), []string{"delete", "brisk-lake", "nothing"}, 1, "boxsnap snapshot delete: No snapshot named ‘nothing’ on brisk-lake that you can see."},
		{"no such box", g.env(), []string{"take", "no-box"}, 1, "boxsnap snapshot take: No box no-box that you can see."},
		{"name too long", g.env(), []string{"take", "brisk-lake", "--name", strings.Repeat("x", 61)}, 1, "A snapshot's name is at most 60 characters; this one has 61."},
		{"note too long", g.env(), []string{"note", "brisk-lake", "only", strings.Repeat("x", 1025)}, 1, "A note is at most 1 KB; this one is 1025 bytes."},
		{"a wrong token", map[string]string{"BOXSNAP_SERVER": g.url, "BOXSNAP_TOKEN": "bxt_wrong"}, []string{"list"}, 1, "That token is not valid"},
		{"no token", map[string]string{"BOXSNAP_SERVER": g.url}, []string{"list"}, 2, "no token: set BOXSNAP_TOKEN or BOXSNAP_TOKEN_FILE"},
		{"no server", map[string]string{"BOXSNAP_SERVER": "http://127.0.0.1:1", "BOXSNAP_TOKEN": g.token}, []string{"list"}, 1, "cannot reach boxsnap at http://127.0.0.1:1"},
		{"a missing argument", g.env(), []string{"delete", "brisk-lake"}, 2, "boxsnap snapshot delete: it takes a box and a snapshot."},
		{"an unknown flag", g.env(), []string{"take", "brisk-lake", "--colour"}, 2, "flag provided but not defined: -colour"},
		{"an unknown command", g.env(), []string{"explode", "brisk-lake", "only"}, 2, "there is no command \"explode\""},
		{"fork: a bad name", g.env(), []string{"fork", "brisk-lake", "only", "--name", "Not Valid"}, 1, "boxsnap snapshot fork: A box's name is 2 to 40 lowercase letters, digits and dashes, starting with a letter."},
		{"fork: a name in use", g.env(), []string{"fork", "brisk-lake", "only", "--name", "brisk-lake"}, 1, "boxsnap snapshot fork: A box named brisk-lake exists already."},
		{"fork --check: a name in use", g.env(), []string{"fork", "brisk-lake", "only", "--check", "--name", "brisk-lake"}, 1, "boxsnap snapshot fork: ‘only’ of brisk-lake cannot be forked now: A box named brisk-lake exists already."},
		{"fork: no such snapshot", g.env(), []string{"fork", "brisk-lake", "nothing", "--check"}, 1, "No snapshot named ‘nothing’ on brisk-lake that you can see."},
		{"fork: a missing argument", g.env(), []string{"fork", "brisk-lake", "--as-machine"}, 2, "boxsnap snapshot fork: it takes a box and a snapshot."},
		{"keep too long", g.env(), []string{"keep", "brisk-lake", "only", "--days", "400"}, 1, "Keep keeps a snapshot 1 to 365 days."},
	} {
		code, out, errw := g.run(t, tc.env, tc.args...)
		if code != tc.code || !strings.Contains(errw, tc.words) {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want exit %d and %q", tc.name, code, errw, out, tc.code, tc.words)
		}
	}
	// The token from a file, and --server over BOXSNAP_SERVER.
	code, out, errw := g.run(t, map[string]string{"BOXSNAP_SERVER": "http://127.0.0.1:1", "BOXSNAP_TOKEN_FILE": tokenFile}, "list", "--server", g.url)
	if code != 0 || !strings.Contains(out, "brisk-lake: 1 of 5 for this box") {
		t.Fatalf("with a token file: exit %d: %s%s", code, out, errw)
	}
}

// TestCLIFork: `snapshot fork` makes a new box from a snapshot, in the
// box's thread or with --as-machine as one of the person's machines;
// --check says whether it can be forked, from its plan, and changes
// nothing.
func TestCLIFork(t *testing.T) {
	t.Parallel()
	g := setup(t)
	ctx := context.Background()
	_, agent, _ := g.Thread(t, "Try the new parser")
	b := g.Box(t, agent, "amber-fox")
	dir := g.Local.BoxDir(providers.Guest{Ref: b.GuestRef})
	if err := os.WriteFile(filepath.Join(dir, "app.conf"), []byte("v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	g.ok(t, "take", "amber-fox", "--name", "v1")
	if err := os.WriteFile(filepath.Join(dir, "app.conf"), []byte("v2"), 0o644); err != nil {
		t.Fatal(err)
	}
	boxes := func() int {
		t.Helper()
		all, err := g.Boxes.List(ctx, snapshots.Owner())
		if err != nil {
			t.Fatal(err)
		}
		return len(all)
	}

	// --check says it can, and makes nothing.
	says(t, g.ok(t, "fork", "amber-fox", "v1", "--check", "--name", "amber-copy"), "‘v1’ of amber-fox can be forked: about ")
	if n := boxes(); n != 1 {
		t.Fatalf("fork --check made a box: %d boxes", n)
	}

	// Into the box's thread, with the snapshot's files.
	says(t, g.ok(t, "fork", "amber-fox", "v1", "--name", "amber-copy"), "Made amber-copy, forked from amber-fox at ")
	fork, err := g.Core.Box(ctx, agent, "amber-copy")
	if err != nil {
		t.Fatalf("the fork is not in the box's thread: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(g.Local.BoxDir(providers.Guest{Ref: fork.GuestRef}), "app.conf")); string(got) != "v1" {
		t.Fatalf("the fork holds %q", got)
	}

	// --as-machine: one of the person's machines, which the agent cannot see.
	says(t, g.ok(t, "fork", "--as-machine", "amber-fox", "v1"), "Made amber-fox-fork, forked from amber-fox at ")
	mine, err := g.Core.Box(ctx, snapshots.Owner(), "amber-fox-fork")
	if err != nil || mine.ThreadID != nil {
		t.Fatalf("fork --as-machine: %+v, %v", mine, err)
	}
	if _, err := g.Core.Box(ctx, agent, "amber-fox-fork"); err == nil {
		t.Fatal("the agent sees the person's machine")
	}

	// A snapshot taken before the image had the identity reset: --check
	// says why not, and exits as a refusal.
	if err := os.Remove(filepath.Join(dir, ".boxsnap", "identity")); err != nil {
		t.Fatal(err)
	}
	g.ok(t, "take", "amber-fox", "--name", "bare")
	code, out, errw := g.run(t, g.env(), "fork", "amber-fox", "bare", "--check")
	if code != cli.ExitRefused || out != "" {
		t.Fatalf("fork --check of a bare snapshot: exit %d, %q", code, out)
	}
	says(t, errw, "boxsnap snapshot fork: ‘bare’ of amber-fox cannot be forked now: Taken before ", "image had the identity reset: it could not be forked after a release. To fork or keep, refresh the image, make the box again from it and take a new snapshot.")
	code, _, errw = g.run(t, g.env(), "fork", "amber-fox", "bare")
	if code != cli.ExitRefused {
		t.Fatalf("fork of a bare snapshot: exit %d", code)
	}
	says(t, errw, "Taken before ", "To fork or keep, refresh the image, make the box again from it and take a new snapshot.")
	if n := boxes(); n != 3 {
		t.Fatalf("%d boxes after the refused fork, want 3", n)
	}

	// The box log says the forks were a boxsnap command's.
	events, err := g.Boxes.BoxLog(ctx, snapshots.Owner(), "amber-fox", 50)
	if err != nil {
		t.Fatal(err)
	}
	forked := 0
	for _, ev := range events {
		if ev.Kind == snapshots.EvForked {
			forked++
			if ev.ActorKind != "cli" {
				t.Fatalf("forked recorded as by %s, not by a boxsnap command", ev.ActorKind)
			}
		}
	}
	if forked != 2 {
		t.Fatalf("amber-fox's log has %d forked", forked)
	}
}

// TestCLIUsage: the usage text lists every command, fork with its flags.
func TestCLIUsage(t *testing.T) {
	t.Parallel()
	var out, errw bytes.Buffer
	if code := cli.Run(context.Background(), []string{"help"}, cli.Env{}, &out, &errw); code != cli.ExitOK {
		t.Fatalf("help: exit %d", code)
	}
	for _, cmd := range []string{"take", "list", "delete", "restore", "fork <box> <snapshot> [--as-machine] [--name <name>] [--count <n>] [--check]", "keep", "unkeep", "rename", "note"} {
		says(t, out.String(), "boxsnap snapshot "+cmd)
	}
	out.Reset()
	if code := cli.Run(context.Background(), []string{"fork", "--help"}, cli.Env{}, &out, &errw); code != cli.ExitOK {
		t.Fatalf("fork --help: exit %d", code)
	}
	says(t, out.String(), "Usage: boxsnap snapshot fork <box> <snapshot> [--as-machine] [--name <name>] [--count <n>] [--check]")
}

// TestCLIBoxTemplates: the person adds, lists and removes box templates
// from the CLI; a folder outside the templates folder is refused in words.
func TestCLIBoxTemplates(t *testing.T) {
	t.Parallel()
	g := setup(t)
	says(t, g.ok(t, "templates"), "No box templates yet: agents cannot make boxes.")
	says(t, g.ok(t, "template", "node-dev", "--command", "npm start", "--env", "PORT=3000", "--processes", "64"), "Saved the box template node-dev.")
	says(t, g.ok(t, "templates"), "node-dev", "npm start", "boxsnap-box")
	got, err := g.Boxes.Template(context.Background(), "node-dev")
	if err != nil || got.Env["PORT"] != "3000" || got.Limits.Processes != 64 {
		t.Fatalf("saved: %+v %v", got, err)
	}
	code, _, errw := g.run(t, g.env(), "template", "etc-copy", "--source", "/etc/ssh")
	if code == cli.ExitOK || !strings.Contains(errw, "A box template's folder is a name inside the templates folder, not a full path.") {
		t.Fatalf("a full path: %d %s", code, errw)
	}
	says(t, g.ok(t, "template-remove", "node-dev"), "Removed the box template node-dev.")
}
