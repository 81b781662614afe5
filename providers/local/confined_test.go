package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTakeNeverFollowsASwappedLink: a box that swaps one of its folders
// for a link to a host folder between the take's scan and its reads gets
// nothing of that host folder into the snapshot: not a file's content (a
// 0600 file of root's), not a link's target. The swapped paths are left
// out, as files that vanished during the take.
func TestTakeNeverFollowsASwappedLink(t *testing.T) {
	t.Parallel()
	e := setup(t)
	host := t.TempDir()
	const secret = "root's own secret"
	if err := os.WriteFile(filepath.Join(host, "secret"), []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/host-link-target", filepath.Join(host, "l")); err != nil {
		t.Fatal(err)
	}
	e.write(t, "keep.txt", "kept")
	e.write(t, "d/secret", "the box's own file")
	if err := os.Symlink("box-link-target", filepath.Join(e.dir, "d", "l")); err != nil {
		t.Fatal(err)
	}
	swapped := false
	e.b.hooks.afterScan = func() {
		if err := os.RemoveAll(filepath.Join(e.dir, "d")); err != nil {
			t.Error(err)
		}
		if err := os.Symlink(host, filepath.Join(e.dir, "d")); err != nil {
			t.Error(err)
		}
		swapped = true
	}
	_, ref := e.take(t)
	if !swapped {
		t.Fatal("the hook did not run")
	}
	m, err := e.b.loadUsable(ref)
	if err != nil {
		t.Fatal(err)
	}
	kept := false
	for _, en := range m.Entries {
		if strings.Contains(en.Target, "host-link-target") {
			t.Errorf("%s holds the host link's target %q", en.Path, en.Target)
		}
		if en.Type != typeFile || strings.HasPrefix(en.Path, markerDir+"/") {
			continue
		}
		data, _, err := e.b.snapshotFile(m, en.Path, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), secret) {
			t.Errorf("%s holds the host's secret file", en.Path)
		}
		kept = kept || en.Path == "keep.txt"
	}
	if !kept {
		t.Error("keep.txt is not in the snapshot")
	}
}
