package local

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers/local/overlay"
)

// wideTree writes into dir a tree whose folders, links and pipes a
// shared tree's workers make side by side: nested folders of several
// modes (a setgid one, one no user but root may enter) and owners, a
// folder of more links than one worker makes in it at a time, links and
// pipes of other owners, and every folder and link its own mtime, set
// last, deepest first.
func wideTree(t *testing.T, dir string) {
	t.Helper()
	var folders, links []string
	for i := range 12 {
		p := fmt.Sprintf("d%02d", i)
		for j := range 4 {
			p = filepath.Join(p, fmt.Sprintf("s%d", j))
			folders = append(folders, p)
		}
	}
	for _, f := range folders {
		if err := os.MkdirAll(filepath.Join(dir, f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f, "file"), []byte("in "+f), 0o644); err != nil {
			t.Fatal(err)
		}
		l := filepath.Join(f, "up")
		if err := os.Symlink("../file", filepath.Join(dir, l)); err != nil {
			t.Fatal(err)
		}
		links = append(links, l)
	}
	if err := os.Mkdir(filepath.Join(dir, "wide"), 0o755); err != nil {
		t.Fatal(err)
	}
	folders = append(folders, "wide")
	for i := range 600 {
		l := filepath.Join("wide", fmt.Sprintf("l%03d", i))
		if err := os.Symlink(fmt.Sprintf("target-%d", i), filepath.Join(dir, l)); err != nil {
			t.Fatal(err)
		}
		links = append(links, l)
	}
	if err := unix.Mkfifo(filepath.Join(dir, "d03", "pipe"), 0o640); err != nil {
		t.Fatal(err)
	}
	for i, f := range folders {
		if i%5 == 1 {
			if err := os.Lchown(filepath.Join(dir, f), 1000, 1001); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, l := range links {
		if i%7 == 3 {
			if err := os.Lchown(filepath.Join(dir, l), 1002, 1003); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Lchown(filepath.Join(dir, "d03", "pipe"), 1000, 1000); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "d01"), 0o2775); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "d02", "s0"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "d05", "s0", "s1"), 0o500); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2003, 4, 5, 6, 7, 8, 9, time.UTC).UnixNano()
	for i, l := range append(links, filepath.Join("d03", "pipe")) {
		ts := []unix.Timespec{unix.NsecToTimespec(base + int64(i)*1001), unix.NsecToTimespec(base + int64(i)*1003)}
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, filepath.Join(dir, l), ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			t.Fatal(err)
		}
	}
	for i := len(folders) - 1; i >= 0; i-- {
		ts := []unix.Timespec{unix.NsecToTimespec(base - int64(i)*997), unix.NsecToTimespec(base - int64(i)*991)}
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, filepath.Join(dir, folders[i]), ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			t.Fatal(err)
		}
	}
}

// TestASharedTreeMadeByWorkersIsTheSnapshot: a shared tree whose
// folders, links and pipes are made and given their details by several
// workers at once, a folder's runs side by side, holds exactly the
// snapshot's entries, with their modes, owners, link targets and times,
// and so does its fork.
func TestASharedTreeMadeByWorkersIsTheSnapshot(t *testing.T) {
	if os.Geteuid() != 0 {
		skipOrFailInCI(t, "a box's files keep their owners only where boxsnap runs as root")
	}
	e := shareEnv(t, 64<<20)
	wideTree(t, e.dir)
	want := withoutIdentity(listing(t, e.dir))
	_, ref := e.take(t)
	fork := e.fork(t, ref, "bxforkwide")
	tree := (&overlay.Lowers{Store: e.b.Store}).Tree(ref.ID)
	if got := withoutIdentity(listing(t, tree)); got != want {
		t.Fatalf("the shared tree differs from the snapshot:\n%s", lineDiff(got, want))
	}
	if got := withoutIdentity(listing(t, fork)); got != want {
		t.Fatalf("the fork differs from the snapshot:\n%s", lineDiff(got, want))
	}
}

// TestARestoreMadeByWorkersIsTheSnapshot: a restore of a wide tree into
// the box's folder after it was emptied, and after its links were
// changed and its folders re-moded, brings back every folder, link and
// pipe with its details.
func TestARestoreMadeByWorkersIsTheSnapshot(t *testing.T) {
	if os.Geteuid() != 0 {
		skipOrFailInCI(t, "a box's files keep their owners only where boxsnap runs as root")
	}
	e := setup(t)
	wideTree(t, e.dir)
	want := withoutIdentity(listing(t, e.dir))
	_, ref := e.take(t)
	for _, p := range []string{"wide/l007", "wide/l300", "d00/s0/up"} {
		if err := os.Remove(filepath.Join(e.dir, p)); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("elsewhere", filepath.Join(e.dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(e.dir, "d01"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(e.dir, "d04")); err != nil {
		t.Fatal(err)
	}
	if err := e.restore(t, ref); err != nil {
		t.Fatal(err)
	}
	if got := withoutIdentity(listing(t, e.dir)); got != want {
		t.Fatalf("the restored folder differs from the snapshot:\n%s", lineDiff(got, want))
	}
}

// lineDiff lists the lines of got that want lacks and those of want that
// got lacks, at most 20 of each.
func lineDiff(got, want string) string {
	in := func(s string) map[string]bool {
		m := make(map[string]bool)
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	g, w := in(got), in(want)
	var out []string
	for _, l := range strings.Split(got, "\n") {
		if !w[l] && len(out) < 20 {
			out = append(out, "+ "+l)
		}
	}
	n := len(out)
	for _, l := range strings.Split(want, "\n") {
		if !g[l] && len(out) < n+20 {
			out = append(out, "- "+l)
		}
	}
	return strings.Join(out, "\n")
}
