package local

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/confined"
	"github.com/boxsnap/boxsnap/providers/local/store"
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
	e.b.hooks.AfterScan = func() {
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
	m, err := e.b.Store.LoadUsable(ref)
	if err != nil {
		t.Fatal(err)
	}
	kept := false
	for _, en := range m.Entries {
		if strings.Contains(en.Target, "host-link-target") {
			t.Errorf("%s holds the host link's target %q", en.Path, en.Target)
		}
		if en.Type != store.TypeFile || strings.HasPrefix(en.Path, confined.MarkerDir+"/") {
			continue
		}
		data, _, err := e.b.SnapshotFile(m, en.Path, 1<<20)
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

// TestSetStraightNeverFollowsALink: a box whose .boxsnap is a link to a host
// folder (made before a take, so its restore brings the link back) has its
// access file written in a real .boxsnap folder of its own, made in the
// link's place: the host folder gets nothing, and no file named env owned
// by the box's user appears in it.
func TestSetStraightNeverFollowsALink(t *testing.T) {
	t.Parallel()
	e := setup(t)
	host := t.TempDir()
	e.write(t, "keep.txt", "kept")
	marker := filepath.Join(e.dir, confined.MarkerDir)
	swap := func() {
		t.Helper()
		if err := os.RemoveAll(marker); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(host, marker); err != nil {
			t.Fatal(err)
		}
	}
	swap()
	_, ref := e.take(t)
	if err := e.restore(t, ref); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(marker); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		swap() // the restore made it a folder again: the box makes it a link
	}
	if os.Geteuid() == 0 {
		// As after the box's process first ran as its user.
		if err := os.Chown(e.dir, 4321, 4321); err != nil {
			t.Fatal(err)
		}
	}
	a := providers.Access{Box: providers.BoxIdentity{ID: e.g.Ref, Install: "in-test", Name: "box"}, Thread: "t1", Generation: 2}
	did, err := e.b.SetStraight(e.ctx, e.g, a)
	if err != nil {
		t.Fatalf("SetStraight: %v", err)
	}
	if len(did) == 0 {
		t.Error("SetStraight says it changed nothing")
	}
	if ents, _ := os.ReadDir(host); len(ents) != 0 {
		t.Errorf("the host folder behind the link got %d names, such as %s", len(ents), ents[0].Name())
	}
	fi, err := os.Lstat(marker)
	if err != nil || !fi.IsDir() {
		t.Fatalf(".boxsnap is not a real folder after SetStraight: %v %v", fi, err)
	}
	if got := e.read(t, confined.AccessFile); got != string(providers.AccessText(a)) {
		t.Errorf("the access file holds %q", got)
	}
	var dst, fst syscall.Stat_t
	_ = syscall.Lstat(e.dir, &dst)
	_ = syscall.Lstat(filepath.Join(e.dir, confined.AccessFile), &fst)
	if fst.Uid != dst.Uid || fst.Gid != dst.Gid {
		t.Errorf("the access file is %d:%d, the box's folder %d:%d", fst.Uid, fst.Gid, dst.Uid, dst.Gid)
	}
	// Done again, with nothing to change, it changes nothing.
	if did, err := e.b.SetStraight(e.ctx, e.g, a); err != nil || len(did) != 0 {
		t.Errorf("a second SetStraight: %v %v", did, err)
	}
}

// TestResetNeverFollowsAMarkerLink: a reset from a template whose .boxsnap
// is a link to a host folder writes the identity marker in a real folder
// made in the link's place; the host folder gets nothing.
func TestResetNeverFollowsAMarkerLink(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	host := t.TempDir()
	tmpl := filepath.Join(base, "templates")
	if err := os.MkdirAll(filepath.Join(tmpl, "linked"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(host, filepath.Join(tmpl, "linked", confined.MarkerDir)); err != nil {
		t.Fatal(err)
	}
	b, err := New(Config{Root: filepath.Join(base, "local"), Templates: tmpl, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	unmountAtEnd(t, b)
	g, err := b.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxresetlink"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ResetGuest(t.Context(), g, providers.BoxSpec{Template: "linked"}); err != nil {
		t.Fatalf("ResetGuest: %v", err)
	}
	if ents, _ := os.ReadDir(host); len(ents) != 0 {
		t.Errorf("the host folder behind the link got %d names, such as %s", len(ents), ents[0].Name())
	}
	if fi, err := os.Lstat(filepath.Join(b.BoxDir(g), confined.MarkerDir)); err != nil || !fi.IsDir() {
		t.Fatalf(".boxsnap is not a real folder after the reset: %v %v", fi, err)
	}
	if v := readResetVersion(b.BoxDir(g)); v != IdentityResetVersion {
		t.Errorf("the identity marker reads reset version %d, want %d", v, IdentityResetVersion)
	}
}
