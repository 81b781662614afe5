package qemu_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/qemu"
	"github.com/boxsnap/boxsnap/providers/qemu/qemutest"
)

// TestQEMUExportImportThroughTheCore: a QEMU box's two snapshots exported
// as one file by one install's core and imported by another's make a new
// box there from the later one, with both snapshots and their ancestry; the
// new box boots holding the file its source's guest wrote.
func TestQEMUExportImportThroughTheCore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBackend(t)
	from := newCore(t, b)
	box, err := from.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "moving-owl", Kind: qemu.KindLinux, Backend: b.ID(), Template: template})
	if err != nil {
		t.Fatalf("AcquireBox: %v", err)
	}
	g := providers.Guest{Backend: b.ID(), Kind: qemu.KindLinux, Ref: box.GuestRef, Generation: 1}
	boot(t, b, g)
	take := func(name string) {
		t.Helper()
		op, _, err := from.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: box.Name, Name: name})
		if err != nil {
			t.Fatalf("take %s: %v", name, err)
		}
		if got := from.Wait(t, op); got.State != snapshots.OpDone {
			t.Fatalf("take %s ended %s: %s", name, got.State, coretest.Deref(got.Error))
		}
	}
	sh(t, b, g, "printf 'first' > /root/state && sync")
	take("first")
	sh(t, b, g, "printf 'second' > /root/state && sync")
	take("second")
	ex, err := from.Contents.PlanExport(ctx, snapshots.Owner(), contents.ExportRequest{Box: box.Name, Snapshots: []string{"first", "second"}})
	if err != nil {
		t.Fatalf("PlanExport: %v", err)
	}
	var file bytes.Buffer
	if _, err := ex.WriteTo(ctx, &file); err != nil {
		t.Fatalf("export: %v", err)
	}

	// The box keeps its ID on the other install, and so its domain's name:
	// both test backends share one libvirtd, so the source goes first, as
	// a box exported and released would.
	if err := b.Release(ctx, g); err != nil {
		t.Fatalf("release the source's guest: %v", err)
	}
	other := newBackend(t)
	to := newCore(t, other)
	// This machine's disk, which other work fills, holds the backend's
	// folder: the import is let go up to the highest room setting.
	settings, err := to.Core.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	settings.RoomPercent = snapshots.MaxRoomPercent
	if err := to.Core.SaveSettings(ctx, snapshots.Owner(), settings); err != nil {
		t.Fatal(err)
	}
	st, err := to.Contents.Stage(ctx, "moving-owl.boxsnap", bytes.NewReader(file.Bytes()))
	if err != nil {
		t.Fatalf("Stage: %v", err)
	}
	defer st.Remove()
	res, err := to.Contents.Import(ctx, snapshots.Owner(), []*contents.Staged{st})
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	if !res.Made || res.MadeFrom != "second" || len(res.Snapshots) != 2 {
		t.Fatalf("the import answered %+v, want a box made from second with both snapshots", res)
	}
	for _, s := range res.Snapshots {
		if s.Name == "second" && (s.Parent == "" || s.Parent != res.Snapshots[0].ID && s.Parent != res.Snapshots[1].ID) {
			t.Errorf("the imported second's parent is %q, want first", s.Parent)
		}
	}
	// The new box's guest is the fork's domain; it is started, through the
	// core, unless it runs already.
	ng := providers.Guest{Backend: other.ID(), Kind: qemu.KindLinux, Ref: "boxsnap-" + res.Box, Generation: 1}
	gs, err := to.Boxes.BoxStatus(ctx, snapshots.Owner(), res.Box)
	if err != nil {
		t.Fatalf("the imported box's status: %v", err)
	}
	if !gs.Exists {
		t.Fatalf("the imported box's guest is not there: %+v", gs)
	}
	if !gs.Running {
		if _, err := to.Boxes.StartBox(ctx, snapshots.Owner(), res.Box); err != nil {
			t.Fatalf("start the imported box: %v", err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, bootWait)
	defer cancel()
	if _, err := qemutest.WaitBoot(wctx, other.ConsoleLog(ng), 0); err != nil {
		t.Fatalf("the imported box's boot: %v", err)
	}
	if got := strings.TrimSpace(sh(t, other, ng, "cat /root/state")); got != "second" {
		t.Errorf("the imported box holds %q, want the snapshot's %q", got, "second")
	}
}
