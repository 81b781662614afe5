package docker_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
)

// TestDockerMovesThroughTheCore: through the core, as the pages, the API
// and the CLI call it, a Docker box's two snapshots export to one file
// (the second against the first), which the other install imports with
// their ancestry, making the box from the tip with its files; a share
// code's copy, redeemed there, makes a box without the sign-in files.
func TestDockerMovesThroughTheCore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	owner := snapshots.Owner()
	b := newBackend(t)
	env, _, _ := coreEnv(t, b, true, install)
	box := dockerBox(t, env, b, "moving-box")
	g := guestOf(box)
	must(t, b.Start(ctx, g))
	writeState(t, b, g, "first")
	first := takeDone(t, env, env.Core, env.Take, box.Name, "first")
	writeState(t, b, g, "second")
	must(t, b.WriteBoxFile(ctx, g, "root/.ssh/id_ed25519", []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"), 0o600))
	second := takeDone(t, env, env.Core, env.Take, box.Name, "second")

	e, err := env.Contents.PlanExport(ctx, owner, contents.ExportRequest{Box: box.Name, Snapshots: []string{first.Name, second.Name}})
	must(t, err)
	var file bytes.Buffer
	m, err := e.WriteTo(ctx, &file)
	must(t, err)
	if len(m.Snapshots) != 2 || m.Snapshots[1].Base != first.ID || m.Box.Backend != "docker" {
		t.Fatalf("the export file holds %+v; want both, the second against the first", m)
	}

	other := otherEngine(t)
	env2, _, _ := coreEnv(t, other, true, otherInstall)
	st, err := env2.Contents.Stage(ctx, "moving-box.boxsnap", &file)
	must(t, err)
	res, err := env2.Contents.Import(ctx, owner, []*contents.Staged{st})
	must(t, err)
	if !res.Made || res.MadeFrom != second.Name || len(res.Snapshots) != 2 {
		t.Fatalf("the import did %+v; want the box made from %s with both snapshots", res, second.Name)
	}
	sn, _, err := env2.Core.Snapshot(ctx, owner, second.ID)
	must(t, err)
	if sn.ParentID == nil || *sn.ParentID != first.ID {
		t.Fatalf("the imported %s's parent is %v, want %s", second.Name, sn.ParentID, first.ID)
	}
	made, err := env2.Core.Box(ctx, owner, res.Box)
	must(t, err)
	mg := guestOf(made)
	t.Cleanup(func() { _ = other.Release(context.Background(), mg) })
	if got := readState(t, other, mg); got != "second" {
		t.Fatalf("the imported box holds %q, want %q", got, "second")
	}

	share, err := env.Contents.MakeShare(ctx, owner, box.Name, second.Name, 1)
	must(t, err)
	shared, err := env.Contents.PlanShared(ctx, share.Code)
	must(t, err)
	var copyFile bytes.Buffer
	must(t, shared.WriteTo(ctx, &copyFile))
	st, err = env2.Contents.Stage(ctx, "shared", &copyFile)
	must(t, err)
	res, err = env2.Contents.Import(ctx, owner, []*contents.Staged{st})
	must(t, err)
	copied, err := env2.Core.Box(ctx, owner, res.Box)
	must(t, err)
	cg := guestOf(copied)
	t.Cleanup(func() { _ = other.Release(context.Background(), cg) })
	if !res.Made || copied.BackendID != other.ID() {
		t.Fatalf("redeeming the share did %+v", res)
	}
	if got := readState(t, other, cg); got != "second" {
		t.Fatalf("the shared copy holds %q", got)
	}
	if got := readFile(t, other, cg, "/root/.ssh/id_ed25519"); got != "" {
		t.Fatalf("the shared copy still holds the box's ssh key: %q", got)
	}
}
