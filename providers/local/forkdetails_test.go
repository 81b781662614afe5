package local

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestATakesNewContentHasTheDetailsATreeShows: where forks share trees,
// a take makes the new object of a file a tree would link with that
// file's mode and mtime, so the first fork's tree links it as it is (no
// chmod nor utimes of each object); a file a tree never links (writable
// by others) gets a read-only object as before. The fork shows each file
// byte-exact, with its mode and mtime.
func TestATakesNewContentHasTheDetailsATreeShows(t *testing.T) {
	if os.Geteuid() != 0 {
		skipOrFailInCI(t, "only root's trees link the store's objects")
	}
	e := shareEnv(t, 64<<20)
	when := time.Date(2024, 3, 1, 12, 0, 0, 123456789, time.UTC)
	files := map[string]os.FileMode{"bin/tool": 0o755, "doc/readme": 0o644, "open/shared": 0o666}
	for rel, mode := range files {
		e.write(t, rel, "content of "+rel)
		p := filepath.Join(e.dir, rel)
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
	}
	_, ref := e.take(t)
	m, err := e.b.Store.LoadUsable(ref)
	if err != nil {
		t.Fatal(err)
	}
	byPath := m.ByPath()
	for rel, mode := range files {
		var st unix.Stat_t
		if err := unix.Stat(e.b.ContentPath(byPath[rel].Hash), &st); err != nil {
			t.Fatal(err)
		}
		want, wantTime := uint32(mode), when.UnixNano()
		if mode&0o022 != 0 {
			want, wantTime = 0o444, 0 // not a tree's: read-only, its own mtime
		}
		if st.Mode&0o7777 != want || (wantTime != 0 && st.Mtim.Nano() != wantTime) {
			t.Fatalf("%s: its object has mode %o, mtime %d; want %o, mtime %d", rel, st.Mode&0o7777, st.Mtim.Nano(), want, wantTime)
		}
	}
	dir := e.fork(t, ref, "bxdetails1")
	for rel, mode := range files {
		p := filepath.Join(dir, rel)
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(p)
		if err != nil || string(data) != "content of "+rel {
			t.Fatalf("the fork's %s holds %q (%v)", rel, data, err)
		}
		if fi.Mode().Perm() != mode || !fi.ModTime().Equal(when) {
			t.Fatalf("the fork's %s has mode %o, mtime %s; want %o, %s", rel, fi.Mode().Perm(), fi.ModTime(), mode, when)
		}
	}
}
