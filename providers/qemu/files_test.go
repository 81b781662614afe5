package qemu_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/providertest"
)

// TestBrowseQcow2Snapshot: a snapshot's files are looked at from its qcow2
// internal snapshot without booting it or mounting anything: a folder
// listed, a file read and streamed, a folder walked, two snapshots compared
// and a file's diff, while the guest runs on and changes. What the guest
// holds is hostile: a name with a newline is one name, a link is shown and
// never followed, a FIFO is "other" and never read, a path that climbs with
// ".." or goes through a link is refused.
func TestBrowseQcow2Snapshot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBackend(t)
	box := providertest.NewID("bx")
	g := newGuest(t, b, box)
	sh(t, b, g, `mkdir -p /root/work/deep && printf 'one\ntwo\n' > /root/work/notes.txt && printf 'kept' > /root/work/deep/kept `+
		`&& printf 'x' > '/root/work/new
line' && ln -s /etc /root/work/etc-link && ln -s ../../nowhere/0/1/2/3 /root/work/dangling && mkfifo /root/work/fifo `+
		`&& dd if=/dev/urandom of=/root/work/big bs=1024 count=300 2>/dev/null && sha256sum /root/work/big > /tmp/bigsum && sync`)
	bigSum := strings.Fields(sh(t, b, g, "cat /tmp/bigsum"))[0]
	first, _, _ := take(t, b, g, box, true)
	sh(t, b, g, `printf 'one\nthree\n' > /root/work/notes.txt && rm /root/work/deep/kept && echo added > /root/work/added && sync`)
	second, _, _ := take(t, b, g, box, false)

	list, err := b.ListFiles(ctx, first, "root/work")
	if err != nil {
		t.Fatalf("ListFiles: %v", err)
	}
	got := map[string]providers.FileEntry{}
	for _, e := range list {
		got[e.Path] = e
	}
	want := map[string]string{"root/work/notes.txt": "file", "root/work/deep": "dir", "root/work/new\nline": "file",
		"root/work/etc-link": "link", "root/work/dangling": "link", "root/work/fifo": "other", "root/work/big": "file"}
	for p, typ := range want {
		if got[p].Type != typ {
			t.Errorf("the snapshot's root/work lists %q as %q, want %q (all: %+v)", p, got[p].Type, typ, list)
		}
	}
	if len(list) != len(want) {
		t.Errorf("the snapshot's root/work lists %d entries, want %d: %+v", len(list), len(want), list)
	}
	if e := got["root/work/etc-link"]; e.Target != "/etc" {
		t.Errorf("the link's target reads %q, want /etc", e.Target)
	}
	if e := got["root/work/dangling"]; e.Target != "../../nowhere/0/1/2/3" {
		t.Errorf("the dangling link's target reads %q", e.Target)
	}
	if e := got["root/work/notes.txt"]; e.Size != 8 || e.Mode != 0o644 || e.ModTime.IsZero() {
		t.Errorf("notes.txt reads %+v, want 8 bytes, 0644 and its time", e)
	}

	var buf bytes.Buffer
	if _, err := b.ReadFile(ctx, first, "root/work/notes.txt", &buf); err != nil || buf.String() != "one\ntwo\n" {
		t.Fatalf("ReadFile of the first snapshot's notes.txt: %q, %v", buf.String(), err)
	}
	rc, e, err := b.OpenFile(ctx, first, "/root/work/big")
	if err != nil {
		t.Fatalf("OpenFile: %v", err)
	}
	data, err := io.ReadAll(rc)
	_ = rc.Close()
	if err != nil || int64(len(data)) != e.Size || e.Size != 300<<10 || sha256Hex(data) != bigSum {
		t.Fatalf("the streamed file is %d bytes (entry %d), sum %s, want the guest's %s: %v", len(data), e.Size, sha256Hex(data), bigSum, err)
	}

	// What the guest holds is hostile.
	for _, c := range []struct{ path, why string }{
		{"root/../etc/passwd", "climbs"},
		{"root/work/etc-link/passwd", "goes through a link"},
		{"root/work/etc-link", "never followed"},
		{"root/work/fifo", "not a file"},
	} {
		var refused *providers.RefusedError
		if _, err := b.ReadFile(ctx, first, c.path, io.Discard); !errors.As(err, &refused) || !strings.Contains(refused.Why, c.why) {
			t.Errorf("ReadFile of %s answered %v, want a refusal that says it %s", c.path, err, c.why)
		}
	}
	if _, err := b.ListFiles(ctx, first, "root/work/etc-link"); err == nil {
		t.Error("ListFiles listed the folder a link points to")
	}
	if _, err := b.ReadFile(ctx, first, "root/work/missing", io.Discard); !errors.Is(err, providers.ErrNotFound) {
		t.Errorf("ReadFile of a missing file answered %v, want not found", err)
	}

	var walked []string
	if err := b.WalkFiles(ctx, first, "root/work", func(e providers.FileEntry) error { walked = append(walked, e.Path); return nil }); err != nil {
		t.Fatalf("WalkFiles: %v", err)
	}
	if len(walked) == 0 || walked[0] != "root/work" || !slices.Contains(walked, "root/work/deep/kept") ||
		slices.Index(walked, "root/work/deep") > slices.Index(walked, "root/work/deep/kept") {
		t.Errorf("the walk of root/work went %q, want the folder first and each folder before what it holds", walked)
	}

	start := time.Now()
	changes, err := b.CompareFiles(ctx, first, &second)
	if err != nil {
		t.Fatalf("CompareFiles: %v", err)
	}
	t.Logf("compared two snapshots of the guest's whole disk in %v: %d changes", time.Since(start), len(changes))
	byPath := map[string]string{}
	for _, c := range changes {
		byPath[c.Path] = c.Change
	}
	for p, change := range map[string]string{"root/work/notes.txt": providers.ChangeChanged, "root/work/deep/kept": providers.ChangeRemoved, "root/work/added": providers.ChangeAdded} {
		if byPath[p] != change {
			t.Errorf("the comparison says %q of %s, want %q (all: %+v)", byPath[p], p, change, changes)
		}
	}
	for _, p := range []string{"root/work/big", "root/work/etc-link", "root/work/deep", "etc/passwd"} {
		if c, ok := byPath[p]; ok {
			t.Errorf("the comparison lists %s as %s; it did not change", p, c)
		}
	}
	diff, err := b.DiffFile(ctx, first, &second, "root/work/notes.txt")
	if err != nil || !strings.Contains(diff, "-two\n") || !strings.Contains(diff, "+three\n") {
		t.Errorf("the diff of notes.txt is %q, %v", diff, err)
	}
	// Against the box now: the guest's disk as it is.
	sh(t, b, g, "echo now > /root/work/notes.txt && sync")
	diff, err = b.DiffFile(ctx, second, nil, "root/work/notes.txt")
	if err != nil || !strings.Contains(diff, "+now\n") {
		t.Errorf("the diff of notes.txt against the box now is %q, %v", diff, err)
	}
	// Every copy went once read.
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(b.ConsoleLog(g)), "looks", "*")); len(left) > 0 {
		t.Errorf("copies left after the looks: %v", left)
	}
	if _, err := os.Stat(b.ConsoleLog(g)); err != nil {
		t.Fatal(err)
	}
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
