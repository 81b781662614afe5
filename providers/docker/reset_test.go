package docker_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/app/api"
	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	restores "github.com/boxsnap/boxsnap/app/snapshots/restore"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/docker"
	"github.com/boxsnap/boxsnap/providers/docker/dockertest"
)

// putFiles writes files (path → content) with mode into the box's
// container, their folders made as needed.
func putFiles(t testing.TB, b *docker.Backend, ref string, mode int64, files map[string]string) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range slices.Sorted(maps.Keys(files)) {
		must(t, tw.WriteHeader(&tar.Header{Name: p, Mode: mode, Size: int64(len(files[p])), Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(files[p]))
		must(t, err)
	}
	must(t, tw.Close())
	_, err := b.Client().CopyToContainer(context.Background(), ref, client.CopyToContainerOptions{DestinationPath: "/", Content: &buf})
	must(t, err)
}

// modeOf is the permission bits of a path in a container, as the engine
// stats it.
func modeOf(t testing.TB, b *docker.Backend, ref, path string) os.FileMode {
	t.Helper()
	st, err := b.Client().ContainerStatPath(context.Background(), ref, client.ContainerStatPathOptions{Path: path})
	must(t, err)
	return st.Stat.Mode
}

// TestDockerResetKeepsLogins: a Docker box is offered a reset, and a reset
// with Keep logins makes it fresh from the image it was made from (its
// container's files and its volume as the image has them, its identity
// value kept and its identity marker written again) and carries over the
// login files from every home folder, with their modes, into folders made
// where the fresh box has none; what is not a login is gone, the box runs
// again as it did, and its access file is written. A login's folder that
// is a link in the box is refused, never followed.
func TestDockerResetKeepsLogins(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBackend(t)
	env, _, _ := coreEnv(t, b, true, install)
	box := dockerBox(t, env, b, "amber-reset")
	g := guestOf(box)
	must(t, b.Start(ctx, g))
	before, _ := inspect(t, b, g.Ref)

	pv, err := env.Restores.Resets().PreviewReset(ctx, snapshots.Owner(), box.Name, "")
	must(t, err)
	if pv.Why != "" {
		t.Fatalf("a Docker box is not offered a reset: %s", pv.Why)
	}
	if want := "the image " + dockertest.TestImage + ", as it was made"; pv.From != want {
		t.Errorf("the reset dialog says the box becomes a fresh copy of %q, want %q", pv.From, want)
	}
	// The API's box_reset, which an agent and the CLI ask, admits it with
	// Keep logins in its dry run, and says the same.
	r := chi.NewRouter()
	r.Mount("/api/v1", api.New(env.APIOptions()))
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	_, token, err := env.Auth.CreateAPIToken(ctx, "cli")
	must(t, err)
	req, err := http.NewRequest("POST", srv.URL+"/api/v1/tools/box_reset", strings.NewReader(`{"box":"amber-reset","keep_logins":true,"dry_run":true}`))
	must(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	must(t, err)
	raw, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	var dry struct {
		From   string
		Logins []string
	}
	must(t, json.Unmarshal(raw, &dry))
	if resp.StatusCode != http.StatusOK || dry.From != pv.From || len(dry.Logins) == 0 {
		t.Errorf("box_reset's dry run: %d %s", resp.StatusCode, raw)
	}

	putFiles(t, b, g.Ref, 0o600, map[string]string{
		"root/.codex/auth.json":           `{"key":"codex-secret"}`,
		"home/agent/.config/gh/hosts.yml": "github.com:\n  oauth_token: gh-secret\n",
	})
	putFiles(t, b, g.Ref, 0o644, map[string]string{"root/work.txt": "a day's work", "home/agent/notes.md": "not a login"})
	writeState(t, b, g, "a day's state")

	op, err := env.Restores.Resets().Reset(ctx, snapshots.Owner(), restores.ResetRequest{Box: box.Name, KeepLogins: true})
	must(t, err)
	if op = env.Wait(t, op); op.State != snapshots.OpDone {
		t.Fatalf("the reset ended %s: %s (%s)", op.State, coretest.Deref(op.Error), coretest.Deref(op.Observed))
	}
	var res restores.ResetResult
	must(t, json.Unmarshal(op.Result, &res))
	for _, k := range []string{"root/.codex/auth.json", "home/agent/.config/gh/hosts.yml"} {
		if !slices.Contains(res.Kept, k) {
			t.Errorf("the reset's answer keeps %v, not %s", res.Kept, k)
		}
	}
	if got := readFile(t, b, g, "/root/.codex/auth.json"); got != `{"key":"codex-secret"}` {
		t.Errorf("the kept Codex login holds %q", got)
	}
	if got := readFile(t, b, g, "/home/agent/.config/gh/hosts.yml"); got != "github.com:\n  oauth_token: gh-secret\n" {
		t.Errorf("the kept GitHub CLI login holds %q", got)
	}
	if m := modeOf(t, b, g.Ref, "/root/.codex/auth.json"); m.Perm() != 0o600 {
		t.Errorf("a kept login keeps its mode: %v", m)
	}
	if m := modeOf(t, b, g.Ref, "/home/agent/.config"); !m.IsDir() || m.Perm() != 0o700 {
		t.Errorf("a login's folder the fresh box had not is made 0700: %v", m)
	}
	for _, gone := range []string{"/root/work.txt", "/home/agent/notes.md", layerFile, volumeFile} {
		if got := readFile(t, b, g, gone); got != "" {
			t.Errorf("%s is still in the box after the reset: %q", gone, got)
		}
	}
	after, ok := inspect(t, b, g.Ref)
	if !ok || !after.Running || after.ID == before.ID || after.Identity != before.Identity || after.Volume == before.Volume {
		t.Fatalf("after the reset the box is %+v, before %+v: want a new container and volume, running, with the same identity", after, before)
	}
	var marker struct {
		Box          string `json:"box"`
		ResetVersion int    `json:"resetVersion"`
	}
	if err := json.Unmarshal([]byte(readFile(t, b, g, "/.boxsnap/identity")), &marker); err != nil || marker.Box != box.ID || marker.ResetVersion != docker.IdentityResetVersion {
		t.Errorf("the identity marker holds %+v (%v)", marker, err)
	}
	if got := readFile(t, b, g, "/.boxsnap/env"); !strings.Contains(got, "BOXSNAP_BOX="+box.ID+"\n") {
		t.Errorf("the access file after the reset holds %q", got)
	}
	for _, name := range []string{g.Ref + "-next", g.Ref + "-prev"} {
		if _, ok := inspect(t, b, name); ok {
			t.Errorf("%s is left after the reset", name)
		}
	}

	// A login's folder the box made a link is refused, never followed.
	putTar(t, b, g, "/", put{name: "home/", kind: tar.TypeDir}, put{name: "home/evil", kind: tar.TypeSymlink, target: "/etc"})
	err = b.WriteBoxFile(ctx, g, "home/evil/.codex/auth.json", []byte("x"), 0o600)
	refused(t, "a write through a link", err, "goes through a link in the box (home/evil), which is never followed")
	if got := readFile(t, b, g, "/etc/.codex/auth.json"); got != "" {
		t.Fatalf("the write followed the link: /etc/.codex/auth.json holds %q", got)
	}
	refused(t, "a path that climbs", b.WriteBoxFile(ctx, g, "../etc/passwd", []byte("x"), 0o600), "is not a path inside the box")
	// A folder where a login goes is never written over, nor what it holds.
	putFiles(t, b, g.Ref, 0o644, map[string]string{"root/.netrc/inside": "kept"})
	if err := b.WriteBoxFile(ctx, g, "root/.netrc", []byte("x"), 0o600); err == nil || !strings.Contains(err.Error(), "it is a folder in the box") {
		t.Fatalf("a write over a folder: %v", err)
	}
	if got := readFile(t, b, g, "/root/.netrc/inside"); got != "kept" {
		t.Fatalf("a write over a folder removed what it held: %q", got)
	}
}

// TestDockerSetStraight: after a restore of a Docker box, its access file,
// /.boxsnap/env, holds the box's access as it is now, not the snapshot's;
// a .boxsnap the box made a link is replaced by a real folder and never
// followed; and setting straight a box already straight changes nothing.
func TestDockerSetStraight(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBackend(t)
	env, _, _ := coreEnv(t, b, true, install)
	box := dockerBox(t, env, b, "amber-straight")
	g := guestOf(box)
	must(t, b.Start(ctx, g))
	// The box makes .boxsnap a link to a folder of its own, which a write
	// that followed it would fill.
	putTar(t, b, g, "/", put{name: "elsewhere/", kind: tar.TypeDir}, put{name: ".boxsnap", kind: tar.TypeSymlink, target: "/elsewhere"})
	writeState(t, b, g, "v1")
	sn := takeDone(t, env, env.Core, env.Take, box.Name, "before")
	writeState(t, b, g, "v2")

	op, err := env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: box.Name, Snapshot: sn.ID})
	must(t, err)
	if op = env.Wait(t, op); op.State != snapshots.OpDone {
		t.Fatalf("the restore ended %s: %s (%s)", op.State, coretest.Deref(op.Error), coretest.Deref(op.Observed))
	}
	if got := readState(t, b, g); got != "v1" {
		t.Fatalf("after the restore the box holds %q, want v1", got)
	}
	now, _, err := env.Core.Snapshot(ctx, snapshots.Owner(), sn.ID)
	must(t, err)
	nb, err := env.Core.Box(ctx, snapshots.Owner(), box.Name)
	must(t, err)
	want := providers.AccessText(providers.Access{Box: providers.BoxIdentity{ID: nb.ID, Name: nb.Name, Kind: nb.Kind, Install: install}, Generation: nb.Generation})
	if got := readFile(t, b, g, "/.boxsnap/env"); got != string(want) {
		t.Fatalf("after restoring %s the access file holds %q, want %q", now.Name, got, want)
	}
	if m := modeOf(t, b, g.Ref, "/.boxsnap"); !m.IsDir() || m&os.ModeSymlink != 0 || m.Perm() != 0o700 {
		t.Fatalf("/.boxsnap is %v: want a real folder, 0700, in place of the box's link", m)
	}
	if m := modeOf(t, b, g.Ref, "/.boxsnap/env"); m.Perm() != 0o600 {
		t.Errorf("the access file is %v, want 0600", m)
	}
	if got := readFile(t, b, g, "/elsewhere/env"); got != "" {
		t.Fatalf("the write followed the box's link: /elsewhere/env holds %q", got)
	}
	if _, ok := inspect(t, b, g.Ref+"-next"); ok {
		t.Fatal("a -next container is left after the restore")
	}

	a := providers.Access{Box: providers.BoxIdentity{ID: nb.ID, Name: nb.Name, Kind: nb.Kind, Install: install}, Generation: nb.Generation}
	did, err := b.SetStraight(ctx, g, a)
	if err != nil || len(did) != 0 {
		t.Fatalf("a box already straight: changed %v (%v), want nothing", did, err)
	}
	a.Thread, a.Threads = "th7thread", []string{"th7thread"}
	did, err = b.SetStraight(ctx, g, a)
	if err != nil || !slices.Equal(did, []string{"its access file"}) {
		t.Fatalf("set straight answered %v (%v), want its access file", did, err)
	}
	if got := readFile(t, b, g, "/.boxsnap/env"); !strings.Contains(got, "BOXSNAP_THREADS=th7thread\n") {
		t.Fatalf("the access file holds %q", got)
	}
	_, err = b.SetStraight(ctx, providers.Guest{Ref: "boxsnap-none"}, a)
	if !errors.Is(err, providers.ErrNotFound) {
		t.Fatalf("setting straight a box with no container: %v, want not found", err)
	}
}

// TestDockerResetUndoesItself: a reset whose kept login cannot be written
// back (the fresh box's image has a file where the login's folder goes)
// puts the Docker box back to its undo, and says so: the box holds what it
// held before the reset, its login included, and runs again.
func TestDockerResetUndoesItself(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBackend(t)
	const image = "boxsnap-test/home-is-a-file:1"
	must(t, b.ImportBusyboxImage(ctx, image, dockertest.Busybox, map[string]string{"/home": "a file where the homes go"}))
	env, _, _ := coreEnv(t, b, true, install)
	box, err := env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "amber-undone", Kind: docker.KindLinux, Backend: b.ID(), Template: image})
	must(t, err)
	g := guestOf(box)
	t.Cleanup(func() { _ = b.Release(context.Background(), g) })
	must(t, b.Start(ctx, g))
	// The box made /home a folder and logged in there.
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	must(t, tw.WriteHeader(&tar.Header{Name: "home/", Typeflag: tar.TypeDir, Mode: 0o755}))
	login := `{"key":"codex-secret"}`
	must(t, tw.WriteHeader(&tar.Header{Name: "home/agent/.codex/auth.json", Typeflag: tar.TypeReg, Mode: 0o600, Size: int64(len(login))}))
	_, _ = tw.Write([]byte(login))
	must(t, tw.Close())
	_, err = b.Client().CopyToContainer(ctx, g.Ref, client.CopyToContainerOptions{DestinationPath: "/", Content: &buf, AllowOverwriteDirWithFile: true})
	must(t, err)
	writeState(t, b, g, "before the reset")

	op, err := env.Restores.Resets().Reset(ctx, snapshots.Owner(), restores.ResetRequest{Box: box.Name, KeepLogins: true})
	must(t, err)
	op = env.Wait(t, op)
	var res restores.ResetResult
	must(t, json.Unmarshal(op.Result, &res))
	if op.State != snapshots.OpFailed || !res.UndoneItself || !strings.Contains(coretest.Deref(op.Error), "could not write the kept login home/agent/.codex/auth.json back") {
		t.Fatalf("the reset ended %s (undone itself: %v): %s (%s)", op.State, res.UndoneItself, coretest.Deref(op.Error), coretest.Deref(op.Observed))
	}
	if got := readState(t, b, g); got != "before the reset" {
		t.Fatalf("after the reset undid itself the box holds %q, want what it held before the reset", got)
	}
	if got := readFile(t, b, g, "/home/agent/.codex/auth.json"); got != login {
		t.Fatalf("after the reset undid itself the login holds %q", got)
	}
	if ci, ok := inspect(t, b, g.Ref); !ok || !ci.Running {
		t.Fatalf("after the reset undid itself the box is %+v (exists %v), want running as before", ci, ok)
	}
	for _, name := range []string{g.Ref + "-next", g.Ref + "-prev"} {
		if _, ok := inspect(t, b, name); ok {
			t.Errorf("%s is left", name)
		}
	}
}
