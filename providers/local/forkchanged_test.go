package local

import (
	"fmt"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/overlay"
)

// TestAForkIsUnchangedWhenAnotherTreeLinksItsSharedFiles: a stopped fork
// whose files lie in its snapshot's shared tree answers unchanged since
// its last take when another fork's tree links the same content (a link
// moves the shared file's change time, never its content, which only a
// copy-up into the fork's own layer can change); a file the fork writes
// after its take still answers changed.
func TestAForkIsUnchangedWhenAnotherTreeLinksItsSharedFiles(t *testing.T) {
	e := shareEnv(t, 64<<20)
	const files = 8
	for i := range files {
		e.write(t, fmt.Sprintf("usr/share/d%d/f%d", i%3, i), fmt.Sprintf("shared file %d", i))
	}
	_, ref := e.take(t)
	fe := e
	fe.g = e.b.guestOf("bxforka", "linux")
	fe.dir = e.fork(t, ref, "bxforka")
	fe.take(t)
	changed := func(what string) providers.Changed {
		t.Helper()
		ck, err := e.b.Changes(e.ctx, fe.g)
		if err != nil {
			t.Fatalf("Changes %s: %v", what, err)
		}
		return ck.Changed
	}
	if got := changed("after the fork's take"); got != providers.ChangedNo {
		t.Fatalf("right after its take the stopped fork answers %v, want unchanged", got)
	}

	// A second snapshot of the same content, forked: its tree links the
	// same content objects, so the first fork's shared files' change
	// time moves.
	var before unix.Stat_t
	if err := unix.Lstat(filepath.Join(fe.dir, "usr/share/d0/f0"), &before); err != nil {
		t.Fatal(err)
	}
	_, ref2 := e.take(t)
	e.fork(t, ref2, "bxforkb")
	if (&overlay.Lowers{Store: e.b.Store}).Tree(ref2.ID) == (&overlay.Lowers{Store: e.b.Store}).Tree(ref.ID) {
		t.Fatal("the second snapshot's shared tree is the first's")
	}
	var after unix.Stat_t
	if err := unix.Lstat(filepath.Join(fe.dir, "usr/share/d0/f0"), &after); err != nil {
		t.Fatal(err)
	}
	if after.Ctim == before.Ctim || after.Ino != before.Ino {
		t.Fatalf("the second tree did not link the first fork's shared file (change time %v then %v, inode %d then %d): the test shows nothing",
			before.Ctim, after.Ctim, before.Ino, after.Ino)
	}
	if got := changed("after another tree linked its shared files"); got != providers.ChangedNo {
		t.Fatalf("the stopped fork answers %v after another fork's tree linked its shared files, want unchanged: its files are as its take has them", got)
	}

	fe.write(t, "usr/share/d1/f1", "written by the fork")
	if got := changed("after a write"); got != providers.ChangedYes {
		t.Fatalf("after the fork wrote a shared file it answers %v, want changed", got)
	}
}
