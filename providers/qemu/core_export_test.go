package qemu_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
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
// new box boots holding the file its source's guest wrote. The later one,
// taken with the guest's memory, is exported as its disk, so the other
// install lists and plans it as holding the disk alone.
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
	take := func(name string, memory bool) string {
		t.Helper()
		op, sn, err := from.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: box.Name, Name: name, Memory: memory})
		if err != nil {
			t.Fatalf("take %s: %v", name, err)
		}
		if got := from.Wait(t, op); got.State != snapshots.OpDone {
			t.Fatalf("take %s ended %s: %s", name, got.State, coretest.Deref(got.Error))
		}
		return sn.ID
	}
	sh(t, b, g, "printf 'first' > /root/state && sync")
	first := take("first", false)
	sh(t, b, g, "printf 'second' > /root/state && sync")
	second := take("second", true)
	if sn, _, err := from.Core.Snapshot(ctx, snapshots.Owner(), second); err != nil || sn.Holds != string(providers.HoldsDiskAndMemory) {
		t.Fatalf("the source's second holds %+v (%v), want its disk and memory", sn, err)
	}
	ex, err := from.Contents.PlanExport(ctx, snapshots.Owner(), contents.ExportRequest{Box: box.Name, Snapshots: []string{"first", "second"}})
	if err != nil {
		t.Fatalf("PlanExport: %v", err)
	}
	var file bytes.Buffer
	if _, err := ex.WriteTo(ctx, &file); err != nil {
		t.Fatalf("export: %v", err)
	}
	t.Run("ManifestSaysTheDiskAlone", func(t *testing.T) {
		m := exportManifest(t, file.Bytes())
		if len(m.Snapshots) != 2 {
			t.Fatalf("the export file's manifest lists %d snapshots, want 2", len(m.Snapshots))
		}
		for _, es := range m.Snapshots {
			if es.Holds != string(providers.HoldsDisk) {
				t.Errorf("the export file's manifest says %s holds %q, want %q: its archive carries the disk alone", es.Name, es.Holds, providers.HoldsDisk)
			}
		}
	})

	// The box keeps its ID on the other install, and so its domain's name:
	// both test backends share one libvirtd, so the source goes first, as
	// a box exported and released would.
	if err := b.Release(ctx, g); err != nil {
		t.Fatalf("release the source's guest: %v", err)
	}
	other := newBackend(t)
	to := newCore(t, other)
	res := importFile(t, to, "moving-owl.boxsnap", file.Bytes())
	if !res.Made || res.MadeFrom != "second" || len(res.Snapshots) != 2 {
		t.Fatalf("the import answered %+v, want a box made from second with both snapshots", res)
	}
	// Each keeps its ID and its ancestry: second was taken from first.
	ids := map[string]contents.ImportedSnapshot{}
	for _, s := range res.Snapshots {
		ids[s.Name] = s
	}
	if ids["first"].ID != first || ids["second"].ID != second {
		t.Errorf("the imported snapshots are %+v, want first %s and second %s, their IDs kept", res.Snapshots, first, second)
	}
	if p := ids["second"].Parent; p != first {
		t.Errorf("the imported second's parent is %q, want first, %s", p, first)
	}
	t.Run("MemorySnapshotImportedAsDisk", func(t *testing.T) {
		for _, s := range res.Snapshots {
			sn, _, err := to.Core.Snapshot(ctx, snapshots.Owner(), s.ID)
			if err != nil {
				t.Fatalf("the imported %s: %v", s.Name, err)
			}
			if sn.Holds != string(providers.HoldsDisk) {
				t.Errorf("the imported %s is listed as holding %q, want %q: an export carries the disk alone", s.Name, sn.Holds, providers.HoldsDisk)
			}
			if w := snapshots.HoldsWords(sn.Holds, ""); w != "disk" {
				t.Errorf("the imported %s is listed as holding %s, want disk", s.Name, w)
			}
			_, _, plan, err := to.Core.Plan(ctx, snapshots.Owner(), res.Box, s.ID)
			if err != nil {
				t.Fatalf("plan the imported %s: %v", s.Name, err)
			}
			if !plan.Restore.RestartsProcesses {
				t.Errorf("the imported %s is planned as a memory snapshot: %+v", s.Name, plan.Restore)
			}
		}
	})
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

// importFile imports the export file named name through env's core, the
// room setting at its highest first: this machine's disk, which other work
// fills, holds the backend's folder.
func importFile(t *testing.T, env *coretest.Env, name string, file []byte) *contents.ImportResult {
	t.Helper()
	ctx := context.Background()
	settings, err := env.Core.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	settings.RoomPercent = snapshots.MaxRoomPercent
	if err := env.Core.SaveSettings(ctx, snapshots.Owner(), settings); err != nil {
		t.Fatal(err)
	}
	st, err := env.Contents.Stage(ctx, name, bytes.NewReader(file))
	if err != nil {
		t.Fatalf("Stage: %v", err)
	}
	defer st.Remove()
	res, err := env.Contents.Import(ctx, snapshots.Owner(), []*contents.Staged{st})
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	return res
}

// exportManifest reads the manifest out of an export file, as a person
// unpacking it with tar would.
func exportManifest(t *testing.T, file []byte) contents.ExportManifest {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(file))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("the export file holds no %s", contents.ExportManifestName)
		}
		if err != nil {
			t.Fatalf("read the export file: %v", err)
		}
		if h.Name != contents.ExportManifestName {
			continue
		}
		var m contents.ExportManifest
		if err := json.NewDecoder(tr).Decode(&m); err != nil {
			t.Fatalf("read the export file's manifest: %v", err)
		}
		return m
	}
}
