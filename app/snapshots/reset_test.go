package snapshots_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	"github.com/boxsnap/boxsnap/providers"
)

// resetEnv is a core whose local backend has a templates folder with one
// template folder, devbox, published as the box template of that name.
func resetEnv(t *testing.T, files map[string]string) *coretest.Env {
	t.Helper()
	tmpl := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(tmpl, "devbox", rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := coretest.New(t, coretest.Options{Templates: tmpl})
	if err := e.Boxes.SaveTemplate(context.Background(), snapshots.Owner(),
		snapshots.BoxTemplate{Name: "devbox", Backend: "local", Kind: "linux", Source: "devbox"}); err != nil {
		t.Fatal(err)
	}
	return e
}

// writeBox writes files into a box's folder.
func writeBox(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func reset(t *testing.T, e *coretest.Env, c snapshots.Caller, req restore.ResetRequest) *snapshots.Operation {
	t.Helper()
	op, err := e.Restores.Resets().Reset(context.Background(), c, req)
	if err != nil {
		t.Fatalf("reset %s: %v", req.Box, err)
	}
	return e.Wait(t, op)
}

func fileIs(t *testing.T, dir, rel, want string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Errorf("%s: %v", rel, err)
		return
	}
	if string(data) != want {
		t.Errorf("%s holds %q, want %q", rel, data, want)
	}
}

func fileGone(t *testing.T, dir, rel string) {
	t.Helper()
	if _, err := os.Lstat(filepath.Join(dir, rel)); !os.IsNotExist(err) {
		t.Errorf("%s is still in the box (%v)", rel, err)
	}
}

// TestResetKeepsLogins: a reset with Keep logins makes the box fresh from
// its template and carries over moatbox's login files from every home
// folder, Claude Code's account file in part; a file over 1 MiB is skipped
// and said. Without Keep logins, nothing is carried.
func TestResetKeepsLogins(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := resetEnv(t, map[string]string{"README": "fresh from devbox"})
	th, agent, _ := e.Thread(t, "fix the build")
	b, err := e.Boxes.AcquireBox(ctx, agent, snapshots.BoxRequest{Name: "amber-fox", Template: "devbox"})
	if err != nil {
		t.Fatal(err)
	}
	dir := e.Local.BoxDir(providers.Guest{Ref: b.GuestRef})
	account := `{"oauthAccount":{"emailAddress":"me@example.com"},"userID":"u1","projects":{"/work":{"history":["a long history"]}}}`
	big := strings.Repeat("x", providers.MaxLoginBytes+1)
	writeBox(t, dir, map[string]string{
		"work.txt":                        "a day's work",
		"README":                          "edited",
		".claude/.credentials.json":       `{"token":"claude-secret"}`,
		".claude.json":                    account,
		".codex/auth.json":                `{"key":"codex-secret"}`,
		".local/share/opencode/auth.json": big,
		"home/agent/.config/gh/hosts.yml": "github.com:\n  oauth_token: gh-secret\n",
		"home/agent/notes.md":             "not a login",
		"root/.netrc":                     "machine example.com password netrc-secret",
	})

	op := reset(t, e, agent, restore.ResetRequest{Box: b.Name, KeepLogins: true})
	if op.State != snapshots.OpDone {
		t.Fatalf("reset ended %s: %s (%s)", op.State, coretest.Deref(op.Error), coretest.Deref(op.Observed))
	}
	var res restore.ResetResult
	if err := json.Unmarshal(op.Result, &res); err != nil {
		t.Fatal(err)
	}
	fileIs(t, dir, "README", "fresh from devbox")
	fileGone(t, dir, "work.txt")
	fileGone(t, dir, "home/agent/notes.md")
	fileGone(t, dir, "root/.netrc") // not on the Keep logins list
	fileIs(t, dir, ".claude/.credentials.json", `{"token":"claude-secret"}`)
	fileIs(t, dir, ".codex/auth.json", `{"key":"codex-secret"}`)
	fileIs(t, dir, "home/agent/.config/gh/hosts.yml", "github.com:\n  oauth_token: gh-secret\n")
	fileGone(t, dir, ".local/share/opencode/auth.json")
	var acct map[string]any
	data, _ := os.ReadFile(filepath.Join(dir, ".claude.json"))
	if err := json.Unmarshal(data, &acct); err != nil || acct["userID"] != "u1" || acct["oauthAccount"] == nil || acct["projects"] != nil {
		t.Errorf("the kept .claude.json is %s: want only the account (%v)", data, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, ".codex/auth.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("a kept login keeps its mode: %v %v", fi.Mode(), err)
	}
	wantKept := []string{".claude/.credentials.json", ".claude.json", ".codex/auth.json", "home/agent/.config/gh/hosts.yml"}
	for _, k := range wantKept {
		if !contains(res.Kept, k) {
			t.Errorf("the reset's answer keeps %v, not %s", res.Kept, k)
		}
	}
	if len(res.Skipped) != 1 || res.Skipped[0] != ".local/share/opencode/auth.json is 1.0 MiB, over 1 MiB" {
		t.Errorf("the reset skipped %q", res.Skipped)
	}
	undo := names(t, e, b.Name)[res.UndoName]
	if undo == nil || !undo.IsUndo() || !strings.HasPrefix(res.UndoName, "before the reset at ") {
		t.Fatalf("the reset's undo is %q (%v)", res.UndoName, undo)
	}
	ev := lastEvent(t, e, b.Name, snapshots.EvReset)
	if !strings.Contains(ev, "skipped .local/share/opencode/auth.json is 1.0 MiB, over 1 MiB") || strings.Contains(ev, "secret") {
		t.Errorf("the box log says %q", ev)
	}
	_ = th

	// Without Keep logins nothing is carried.
	writeBox(t, dir, map[string]string{"work.txt": "again"})
	op = reset(t, e, snapshots.Owner(), restore.ResetRequest{Box: b.Name})
	if op.State != snapshots.OpDone {
		t.Fatalf("reset ended %s: %s", op.State, coretest.Deref(op.Error))
	}
	fileGone(t, dir, ".claude/.credentials.json")
	fileGone(t, dir, ".codex/auth.json")
	fileGone(t, dir, "work.txt")
	fileIs(t, dir, "README", "fresh from devbox")
}

// TestResetUndo: Undo restores the box to its newest undo, the state from
// before the reset; a kept login that cannot be written back makes the reset
// undo itself (the fresh box has a file where the login's folder goes, so the
// write fails for real); and a box keeps at most 2 undos besides its 5.
func TestResetUndo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := resetEnv(t, map[string]string{"README": "fresh", ".codex": "a file where a folder goes"})
	b, err := e.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "brisk-lake", Template: "devbox"})
	if err != nil {
		t.Fatal(err)
	}
	dir := e.Local.BoxDir(providers.Guest{Ref: b.GuestRef})
	if err := os.Remove(filepath.Join(dir, ".codex")); err != nil {
		t.Fatal(err)
	}
	writeBox(t, dir, map[string]string{"work.txt": "a day's work", ".codex/auth.json": `{"key":"codex"}`, "README": "edited"})

	// The write fails: the reset undoes itself.
	op := reset(t, e, snapshots.Owner(), restore.ResetRequest{Box: b.Name, KeepLogins: true})
	if op.State != snapshots.OpFailed {
		t.Fatalf("a reset whose login could not be written back ended %s", op.State)
	}
	want := "The reset undid itself: boxsnap could not write the kept login .codex/auth.json back: "
	if !strings.HasPrefix(coretest.Deref(op.Error), want) || !strings.Contains(coretest.Deref(op.Error), "brisk-lake is as it was before, from ‘before the reset at ") {
		t.Fatalf("the reset says %q", coretest.Deref(op.Error))
	}
	fileIs(t, dir, "work.txt", "a day's work")
	fileIs(t, dir, ".codex/auth.json", `{"key":"codex"}`)
	fileIs(t, dir, "README", "edited")
	if got := boxState(t, e, b.Name); got != "ready" {
		t.Fatalf("after the reset undid itself the box is %s", got)
	}
	var undone restore.ResetResult
	if err := json.Unmarshal(op.Result, &undone); err != nil || !undone.UndoneItself || undone.Undo == "" {
		t.Fatalf("the undone reset's result is %s (%v)", op.Result, err)
	}
	if got := lastEvent(t, e, b.Name, snapshots.EvResetUndone); !strings.HasPrefix(got, "The reset undid itself") {
		t.Fatalf("the box log says of the undone reset %q", got)
	}

	// Without Keep logins the reset goes through; Undo brings the work back.
	op = reset(t, e, snapshots.Owner(), restore.ResetRequest{Box: b.Name})
	if op.State != snapshots.OpDone {
		t.Fatalf("reset ended %s: %s", op.State, coretest.Deref(op.Error))
	}
	fileGone(t, dir, "work.txt")
	fileIs(t, dir, "README", "fresh")
	var res restore.ResetResult
	if err := json.Unmarshal(op.Result, &res); err != nil {
		t.Fatalf("the reset's result %s: %v", op.Result, err)
	}
	uop, err := e.Restores.Resets().UndoNewest(ctx, snapshots.Owner(), b.Name, "", false)
	if err != nil {
		t.Fatal(err)
	}
	if uop = e.Wait(t, uop); uop.State != snapshots.OpDone {
		t.Fatalf("undo ended %s: %s", uop.State, coretest.Deref(uop.Error))
	}
	if uop.Target == nil || *uop.Target != res.Undo {
		t.Fatalf("Undo restored %v, want the reset's undo %s", uop.Target, res.Undo)
	}
	fileIs(t, dir, "work.txt", "a day's work")
	fileIs(t, dir, ".codex/auth.json", `{"key":"codex"}`)

	// Resets and restores together keep at most 2 undos.
	for i := 0; i < 2; i++ {
		if op := reset(t, e, snapshots.Owner(), restore.ResetRequest{Box: b.Name}); op.State != snapshots.OpDone {
			t.Fatalf("reset ended %s: %s", op.State, coretest.Deref(op.Error))
		}
	}
	if got := undos(names(t, e, b.Name)); len(got) != snapshots.UndosPerBox {
		t.Fatalf("the box holds undos %v, want %d", got, snapshots.UndosPerBox)
	}
}

// TestResetBreakAttempts: an agent's reset reaches only its own thread's
// box, and only a box template the owner made for its backend: a path, a
// source or another thread's box reads as refused, and nothing changes.
func TestResetBreakAttempts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := resetEnv(t, map[string]string{"README": "fresh"})
	_, agent, _ := e.Thread(t, "mine")
	_, other, _ := e.Thread(t, "other")
	b, err := e.Boxes.AcquireBox(ctx, agent, snapshots.BoxRequest{Name: "calm-reef", Template: "devbox"})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := e.Boxes.AcquireBox(ctx, other, snapshots.BoxRequest{Name: "dusky-dune", Template: "devbox"})
	if err != nil {
		t.Fatal(err)
	}
	dir := e.Local.BoxDir(providers.Guest{Ref: theirs.GuestRef})
	writeBox(t, dir, map[string]string{"work.txt": "theirs"})
	for _, tc := range []struct {
		req   restore.ResetRequest
		words string
	}{
		{restore.ResetRequest{Box: theirs.ID}, "No box " + theirs.ID + " that you can see."},
		{restore.ResetRequest{Box: theirs.Name, KeepLogins: true}, "No box dusky-dune that you can see."},
		{restore.ResetRequest{Box: b.Name, Template: "../../etc"}, "No box template by that name"},
		{restore.ResetRequest{Box: b.Name, Template: "/etc"}, "No box template by that name"},
		{restore.ResetRequest{Box: b.Name, Template: "devbox/../../x"}, "No box template by that name"},
	} {
		_, err := e.Restores.Resets().Reset(ctx, agent, tc.req)
		if err == nil {
			t.Fatalf("an agent's reset %+v was admitted", tc.req)
		}
		coretest.RefusedWith(t, err, tc.words)
	}
	fileIs(t, dir, "work.txt", "theirs")
	if got := undos(names(t, e, b.Name)); len(got) != 0 {
		t.Errorf("a refused reset took undos %v", got)
	}
	// An agent cannot undo another thread's box either.
	if _, err := e.Restores.Resets().UndoNewest(ctx, agent, theirs.ID, "", false); err == nil {
		t.Fatal("an agent undid another thread's box")
	} else {
		coretest.RefusedWith(t, err, "No box "+theirs.ID+" that you can see.")
	}
	// Its own box resets.
	if op := reset(t, e, agent, restore.ResetRequest{Box: b.Name, Template: "devbox"}); op.State != snapshots.OpDone {
		t.Fatalf("the agent's own reset ended %s: %s", op.State, coretest.Deref(op.Error))
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// lastEvent is the words of the box's newest log event of kind.
func lastEvent(t *testing.T, e *coretest.Env, box, kind string) string {
	t.Helper()
	evs, err := e.Boxes.BoxLog(context.Background(), snapshots.Owner(), box, 50)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Kind == kind {
			return ev.Words
		}
	}
	var all bytes.Buffer
	for _, ev := range evs {
		all.WriteString(ev.Kind + ": " + ev.Words + "\n")
	}
	t.Fatalf("no %s event in the box log:\n%s", kind, all.String())
	return ""
}

// boxState is the state of the person's box of that name.
func boxState(t *testing.T, e *coretest.Env, box string) string {
	t.Helper()
	b, err := e.Core.Box(context.Background(), snapshots.Owner(), box)
	if err != nil {
		t.Fatal(err)
	}
	return string(b.State)
}
