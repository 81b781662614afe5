package qemu

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// TestHeldCopyOfImported: the held copy of an imported snapshot replaces
// its qcow2 (the box's release would leave that file behind); a copy cut
// short is listed incomplete, never read, and made again; a whole one is
// answered as it is; its delete removes every file of it, twice.
func TestHeldCopyOfImported(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	b, err := New(Config{ID: "qemu-test", Install: "intest", Dir: dir, Templates: map[string]Template{"busybox": {}}})
	if err != nil {
		t.Fatal(err)
	}
	disk := filepath.Join(t.TempDir(), "plain.qcow2")
	if err := qemuImg(ctx, "create", "-q", "-f", "qcow2", disk, "64M"); err != nil {
		t.Fatal(err)
	}
	id, group := "sn"+strings.Repeat("a", 12), "bx"+strings.Repeat("c", 12)
	info := archiveInfo{Format: archiveFormat, Kind: archiveKind, ID: id, Name: "kept", Template: "busybox", Reset: 1, TakenAt: time.Now().UTC()}
	if info.DiskSha256, info.DiskBytes, err = fileSum(disk); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := writeArchive(info, disk, &buf); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ImportSnapshots(ctx, providers.ImportOptions{Group: group}, []io.Reader{&buf}); err != nil {
		t.Fatal(err)
	}
	src := b.importedRef(group, id)
	label := providers.Label{Install: "intest", Box: group, Snapshot: id, ResetVersion: 1}

	// A copy cut short after its record, its part spoiled.
	if err := b.writeHeld(id, heldMeta{Label: label, Template: "busybox"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b.heldDisk(id)+".part", []byte("spoiled"), 0o600); err != nil {
		t.Fatal(err)
	}
	listed, err := b.listHeld()
	if err != nil || len(listed) != 1 || !listed[0].Incomplete {
		t.Fatalf("a copy cut short is listed as %+v (%v); want it incomplete", listed, err)
	}
	if _, err := b.source(ctx, listed[0].Ref); err == nil {
		t.Fatal("a copy cut short is read")
	}

	p, err := b.HoldCopy(ctx, src, label, providers.HeldCopyClone, nil)
	if err != nil || !p.Remade || !p.Template || p.Copy == nil || p.Copy.Where != heldWhere {
		t.Fatalf("HoldCopy over a copy cut short: %+v %v; want it remade, whole", p, err)
	}
	if left, err := b.importedSnapshots(); err != nil || len(left) != 0 {
		t.Fatalf("the imported snapshot's qcow2 is left beside its held copy: %+v %v", left, err)
	}
	listed, err = b.listHeld()
	if err != nil || len(listed) != 1 || listed[0].Incomplete || listed[0].Label.Held != src.Ref || listed[0].Label.ResetVersion != 1 {
		t.Fatalf("the held copy is listed as %+v (%v)", listed, err)
	}
	if s, err := b.source(ctx, *p.Copy); err != nil || s.template != "busybox" || s.file != b.heldDisk(id) {
		t.Fatalf("the held copy's source: %+v %v", s, err)
	}
	if err := qemuImg(ctx, "check", "-q", "-f", "qcow2", b.heldDisk(id)); err != nil {
		t.Fatalf("the held copy is not a whole qcow2: %v", err)
	}
	again, err := b.HoldCopy(ctx, src, label, providers.HeldCopyClone, nil)
	if err != nil || again.Remade || !again.Template {
		t.Fatalf("HoldCopy of a whole copy: %+v %v; want it answered as it is", again, err)
	}
	for range 2 {
		if err := b.removeHeld(id); err != nil {
			t.Fatal(err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, importsDirName, "*")); len(left) != 0 {
		t.Fatalf("the held copy's delete left %v", left)
	}
}
