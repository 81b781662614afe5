package web

import (
	"context"
	"html"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers/docker"
)

// TestDockerSnapshotMoves: a Docker snapshot's menu offers Export… and
// Share code… as a local one's does, since the Docker backend moves its
// snapshots (here an engine that is not running: the menu asks the
// backend what it offers, not the engine).
func TestDockerSnapshotMoves(t *testing.T) {
	t.Parallel()
	be, err := docker.New(docker.Config{ID: "docker", Host: "unix://" + t.TempDir() + "/docker.sock", Install: "in7anyinstall12"})
	if err != nil {
		t.Fatal(err)
	}
	s := newSite(t, coretest.Options{NoWorkers: true, Extra: []snapshots.Backend{{ID: "docker", Kind: "docker", Label: "Docker (this host)", Snap: be, Boxes: be}}})
	ctx := context.Background()
	pool, st := s.env.Pool, s.env.Store
	if _, err := st.MoveBoxInsert(ctx, pool, db.MoveBoxInsertParams{ID: "bxdockermove01", Name: "crisp-dune", Kind: docker.KindLinux, BackendID: "docker", Host: "docker", GuestRef: "boxsnap-bxdockermove01"}); err != nil {
		t.Fatal(err)
	}
	if err := st.MoveBoxReady(ctx, pool, "bxdockermove01"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.MoveSnapshotInsert(ctx, pool, db.MoveSnapshotInsertParams{ID: "sndockermove01", BoxID: "bxdockermove01", BoxName: "crisp-dune", BoxKind: docker.KindLinux,
		BackendID: "docker", Host: "docker", Storage: "docker", Name: "before", TakenAt: time.Now().UTC(), ByKind: "person", Holds: "disk", Ref: "sndockermove01"}); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(s.do(t, "GET", "/boxes/crisp-dune", nil, nil).Body.String())
	for _, item := range []string{"/snapshots/sndockermove01/export", "/snapshots/sndockermove01/share"} {
		if !strings.Contains(page, item) {
			t.Errorf("the Docker snapshot's menu does not lead to %s:\n%s", item, page)
		}
	}
	if strings.Contains(page, "cannot move snapshots out") {
		t.Errorf("the Docker snapshot's menu says it cannot move:\n%s", page)
	}
}
