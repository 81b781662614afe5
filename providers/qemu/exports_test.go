package qemu_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/providertest"
	"github.com/boxsnap/boxsnap/providers/qemu"
)

// TestQEMUExportImport: a snapshot moves between installs with its
// ancestry. Two snapshots of a guest that wrote a file before each are
// exported, the first whole and the second against it; a second backend,
// with folders of its own, imports them in the reverse order as snapshots
// of a box it does not have, each with its parent; a look inside the first
// reads its file without booting; a fork of the second boots a guest that
// reads both files; importing them again changes nothing.
func TestQEMUExportImport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBackend(t)
	box := providertest.NewID("bx")
	g := newGuest(t, b, box)
	one, two := providertest.NewID("tk"), providertest.NewID("tk")
	sh(t, b, g, "printf '%s' '"+one+"' > /root/one && sync")
	first, _, _ := take(t, b, g, box, true)
	sh(t, b, g, "printf '%s' '"+two+"' > /root/two && sync")
	second, _, _ := take(t, b, g, box, false)

	var whole, incr bytes.Buffer
	if err := b.ExportSnapshot(ctx, first, providers.ExportOptions{Name: "first"}, &whole); err != nil {
		t.Fatalf("ExportSnapshot whole: %v", err)
	}
	if err := b.ExportSnapshot(ctx, second, providers.ExportOptions{Name: "second", Base: &first}, &incr); err != nil {
		t.Fatalf("ExportSnapshot against the first: %v", err)
	}
	if incr.Len() >= whole.Len() {
		t.Errorf("the archive against the first holds %d bytes, the whole one %d: it does not leave out the base's disk", incr.Len(), whole.Len())
	}

	other := newBackend(t)
	group := providertest.NewID("bx")
	imp := func() []providers.ImportedSnapshot {
		t.Helper()
		got, err := other.ImportSnapshots(ctx, providers.ImportOptions{Group: group},
			[]io.Reader{bytes.NewReader(incr.Bytes()), bytes.NewReader(whole.Bytes())})
		if err != nil {
			t.Fatalf("ImportSnapshots: %v", err)
		}
		return got
	}
	got := imp()
	byID := map[string]providers.ImportedSnapshot{}
	for _, s := range got {
		byID[s.Ref.ID] = s
	}
	if len(got) != 2 || byID[first.ID].Name != "first" || byID[second.ID].Name != "second" {
		t.Fatalf("the import published %+v, want the two snapshots by their names", got)
	}
	if p := byID[second.ID].Parent; p != first.ID {
		t.Errorf("the second imported snapshot's parent is %q, want the first, %s", p, first.ID)
	}
	if held := heldOf(t, other, group); len(held) != 2 {
		t.Errorf("the importing backend holds %+v of box %s, want the two snapshots", held, group)
	}

	var read bytes.Buffer
	if _, err := other.ReadFile(ctx, byID[first.ID].Ref, "root/one", &read); err != nil || read.String() != one {
		t.Errorf("the imported first snapshot's /root/one reads %q (%v), want %q", read.String(), err, one)
	}
	if _, err := other.ReadFile(ctx, byID[first.ID].Ref, "root/two", io.Discard); err == nil {
		t.Errorf("the imported first snapshot holds /root/two, written after it")
	}

	forkID := providertest.NewID("bx")
	fg, err := other.ForkSnapshot(ctx, byID[second.ID].Ref, providers.BoxIdentity{ID: forkID, Name: "imported", Kind: qemu.KindLinux, Install: "intest"}, nil)
	if err != nil {
		t.Fatalf("ForkSnapshot of the imported snapshot: %v", err)
	}
	imported := byID[second.ID].Ref
	plan, err := other.PlanSnapshots(ctx, fg, &imported)
	if err != nil {
		t.Fatalf("PlanSnapshots of the imported snapshot: %v", err)
	}
	if !plan.Fork.OK || plan.Restore.Way != providers.WayNone || plan.Restore.Why == "" {
		t.Errorf("the plan of an imported snapshot offers fork %v and restore %q (%q); want a fork, and no restore in place, in words", plan.Fork.OK, plan.Restore.Way, plan.Restore.Why)
	}
	boot(t, other, fg)
	if got := strings.TrimSpace(sh(t, other, fg, "cat /root/one; echo; cat /root/two")); got != one+"\n"+two {
		t.Errorf("the fork of the imported snapshot reads %q, want %q", got, one+"\n"+two)
	}

	for _, s := range imp() {
		if !s.Already {
			t.Errorf("imported again, %s is not found already there", s.Ref.ID)
		}
	}
	if again := heldOf(t, other, group); len(again) != 2 {
		t.Errorf("imported again, the backend holds %d snapshots of box %s, want the same 2", len(again), group)
	}
}

// heldOf is what the backend holds labelled with box (both test backends
// share one libvirtd and one install, so each lists the other's domains).
func heldOf(t *testing.T, b *qemu.Backend, box string) []providers.HeldSnapshot {
	t.Helper()
	all, err := b.HeldSnapshots(context.Background())
	if err != nil {
		t.Fatalf("HeldSnapshots: %v", err)
	}
	var out []providers.HeldSnapshot
	for _, h := range all {
		if h.Label.Box == box {
			out = append(out, h)
		}
	}
	return out
}
