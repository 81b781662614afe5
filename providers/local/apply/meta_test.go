package apply

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/boxsnap/boxsnap/providers/local/confined"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// TestRestoreNeverChangesHostFilesThroughALink: a restore runs as root and
// puts back owners and modes; where a box's folder has become a link out of
// the box, setting a file's details under it is refused, and the file the
// link leads to keeps its mode.
func TestRestoreNeverChangesHostFilesThroughALink(t *testing.T) {
	t.Parallel()
	box := t.TempDir()
	outside := t.TempDir()
	victim := filepath.Join(outside, "passwd")
	if err := os.WriteFile(victim, []byte("root:x:0:0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(box, "etc")); err != nil {
		t.Fatal(err)
	}
	tree, err := confined.OpenTree(box)
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	e := &store.Entry{Path: "etc/passwd", Type: store.TypeFile, Mode: 0o743, UID: uint32(os.Getuid()), GID: uint32(os.Getgid())}
	if err := setMeta(tree, e, os.Geteuid() == 0); err == nil {
		t.Fatal("setting a file's details through a link out of the box was not refused")
	}
	if fi, err := os.Stat(victim); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("the file outside the box changed: %v %v", fi.Mode(), err)
	}
	// The last component a link: its own details, never its target's.
	if err := os.Symlink(victim, filepath.Join(box, "link")); err != nil {
		t.Fatal(err)
	}
	l := &store.Entry{Path: "link", Type: store.TypeLink, Target: victim, UID: uint32(os.Getuid()), GID: uint32(os.Getgid())}
	if err := setMeta(tree, l, os.Geteuid() == 0); err != nil {
		t.Fatalf("a link's own details: %v", err)
	}
	// And a plain file inside the box still gets its mode.
	if err := os.WriteFile(filepath.Join(box, "f"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := &store.Entry{Path: "f", Type: store.TypeFile, Mode: 0o640, UID: uint32(os.Getuid()), GID: uint32(os.Getgid())}
	if err := setMeta(tree, f, os.Geteuid() == 0); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(box, "f")); fi.Mode().Perm() != 0o640 {
		t.Fatalf("a file in the box has mode %v, want 0640", fi.Mode().Perm())
	}
	// The box's own folder, ".".
	d := &store.Entry{Path: ".", Type: store.TypeDir, Mode: 0o750, UID: uint32(os.Getuid()), GID: uint32(os.Getgid())}
	if err := setMeta(tree, d, os.Geteuid() == 0); err != nil {
		t.Fatal(err)
	}
}
