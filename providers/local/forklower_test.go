package local

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/providers/local/overlay"
)

// inotifyWatches counts the inotify watches this process holds, every
// journal's.
func inotifyWatches(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fdinfo")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		data, err := os.ReadFile(filepath.Join("/proc/self/fdinfo", fd.Name()))
		if err == nil {
			n += strings.Count(string(data), "inotify wd:")
		}
	}
	return n
}

// TestAForksSharedFilesAreNotItsHardLinks: a file of a fork whose data
// lies in its snapshot's shared tree is no hard link of the box's, whatever
// its link count (its other names are the store's and other trees',
// outside the box): it gets no watch of its own, a write to it (which
// copies it up into the box's image) and a shared folder renamed leave the
// next take journal-driven, and that take equals a walk. A hard link the
// box makes itself, of a shared file or of one it copied up, keeps a hard
// link's treatment: the next take walks, and so does the take after a
// write to it through its other name.
func TestAForksSharedFilesAreNotItsHardLinks(t *testing.T) {
	loopOrSkip(t)
	if why, _ := overlay.Probe(t.TempDir()); why != "" {
		skipOrFailInCI(t, "forks cannot share a tree here: "+why)
	}
	je := setupJournal(t, t.TempDir(), Config{DiskImages: true})
	const files = 60
	for i := range files {
		je.write(t, fmt.Sprintf("usr/share/d%d/f%d", i%6, i), fmt.Sprintf("shared file %d", i))
	}
	je.write(t, "etc/solo", "a file of one link in the tree")
	_, ref := je.take(t)
	fe := je
	fe.g = je.b.guestOf("bxforka", "linux")
	fe.dir = je.fork(t, ref, "bxforka")

	// Each of the tree's shared files gets a name outside the box, as the
	// store's content object is when the tree links it.
	tree := (&overlay.Lowers{Store: je.b.Store}).Tree(ref.ID)
	outside := t.TempDir() // on the data folder's file system, a temporary folder too
	for i := range files {
		p := fmt.Sprintf("usr/share/d%d/f%d", i%6, i)
		if err := os.MkdirAll(filepath.Join(outside, filepath.Dir(p)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(filepath.Join(tree, p), filepath.Join(outside, p)); err != nil {
			t.Fatal(err)
		}
	}

	if err := je.b.Start(je.ctx, fe.g); err != nil {
		t.Fatal(err)
	}
	fe.takeLogged(t) // the first take walks: the journal started after the last
	if n := inotifyWatches(t); n >= files {
		t.Fatalf("the process holds %d inotify watches after the fork's take, want fewer than its %d shared files: each got a watch of its own, as a hard link", n, files)
	}
	journalDriven := func(what string) {
		t.Helper()
		ref, walked, why := fe.takeLogged(t)
		if walked {
			t.Fatalf("the take after %s walked the fork's folder: %s", what, why)
		}
		got, err := je.b.Manifest(ref.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diffs := sameEntries(got, walkTake(t, je.b, fe.dir), false); len(diffs) > 0 {
			t.Fatalf("the take after %s differs from a walk in %d paths:\n%s", what, len(diffs), strings.Join(diffs[:min(len(diffs), 10)], "\n"))
		}
	}
	walks := func(what string) {
		t.Helper()
		if _, walked, why := fe.takeLogged(t); !walked || !strings.Contains(why, "hard link") {
			t.Fatalf("the take after %s: walked %v (%s), want a walk for a hard link", what, walked, why)
		}
	}

	fe.write(t, "usr/share/d1/f1", "written by the fork")
	journalDriven("a write to a shared file")
	if err := os.Rename(filepath.Join(fe.dir, "usr/share/d2"), filepath.Join(fe.dir, "usr/share/renamed")); err != nil {
		t.Fatal(err)
	}
	journalDriven("a shared folder renamed")

	if err := os.Link(filepath.Join(fe.dir, "usr/share/d3/f3"), filepath.Join(fe.dir, "usr/share/d3/link")); err != nil {
		t.Fatal(err)
	}
	walks("a hard link the box made of a shared file")
	if err := os.Link(filepath.Join(fe.dir, "etc/solo"), filepath.Join(fe.dir, "etc/solo-link")); err != nil {
		t.Fatal(err)
	}
	walks("a hard link the box made of a file of one link in the tree")
	fe.write(t, "etc/solo-link", "written through the box's other name")
	walks("a write through the other name of a file the box linked")
	if got, err := os.ReadFile(filepath.Join(fe.dir, "etc/solo")); err != nil || string(got) != "written through the box's other name" {
		t.Fatalf("the box's hard link reads %q (%v), want what was written through its other name", got, err)
	}
}
