package local

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers/local/overlay"
)

// inode is the device and inode of path, read through no link.
func inode(t *testing.T, path string) [2]uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return [2]uint64{st.Dev, st.Ino}
}

// objectOf is the store's object path of the content data.
func objectOf(e env, data string) string {
	sum := sha256.Sum256([]byte(data))
	return e.b.ContentPath(hex.EncodeToString(sum[:]))
}

// withoutIdentity is a listing less its .boxsnap lines: each box's
// identity is its own.
func withoutIdentity(l string) string {
	var out []string
	for _, line := range strings.Split(l, "\n") {
		if !strings.HasPrefix(line, ".boxsnap") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// TestASharedTreeLinksTheStoresContent: a shared tree's file owned by
// root that neither its group nor others may change, and that is not
// setuid or setgid, is a hard link to the store's content object, with
// the snapshot's mode, owner and times; two files of the same content are
// two files of the tree, not one; a setuid file, a file others may write
// and a file of another owner are copies; and the forks read them all as
// the snapshot has them.
func TestASharedTreeLinksTheStoresContent(t *testing.T) {
	if os.Geteuid() != 0 {
		skipOrFailInCI(t, "a shared tree links the store's content only where boxsnap runs as root")
	}
	e := shareEnv(t, 64<<20)
	e.write(t, "etc/motd", "welcome")
	e.write(t, "etc/copy-of-motd", "welcome")
	e.write(t, "bin/tool", "a setuid program")
	e.write(t, "tmp/open", "others may write")
	e.write(t, "home/alice/notes", "alice's")
	if err := os.Chmod(filepath.Join(e.dir, "bin/tool"), 0o755|fs.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(e.dir, "tmp/open"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(filepath.Join(e.dir, "home/alice/notes"), 1000, 1000); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(e.dir, "etc/motd"), old, old); err != nil {
		t.Fatal(err)
	}
	_, ref := e.take(t)
	fork := e.fork(t, ref, "bxforka")
	tree := (&overlay.Lowers{Store: e.b.Store}).Tree(ref.ID)

	links := 0
	for _, p := range []string{"etc/motd", "etc/copy-of-motd"} {
		if inode(t, filepath.Join(tree, p)) == inode(t, objectOf(e, "welcome")) {
			links++
		}
	}
	if links != 1 {
		t.Fatalf("%d of the tree's two files of one content are the store's object, want one: each path its own file, and the content linked once", links)
	}
	if inode(t, filepath.Join(tree, "etc/copy-of-motd")) == inode(t, filepath.Join(tree, "etc/motd")) {
		t.Fatal("two files of the snapshot are one file in the shared tree")
	}
	for p, data := range map[string]string{"bin/tool": "a setuid program", "tmp/open": "others may write", "home/alice/notes": "alice's"} {
		if inode(t, filepath.Join(tree, p)) == inode(t, objectOf(e, data)) {
			t.Fatalf("the shared tree's %s is the store's object, want a copy: the store's object must never be setuid, writable by others or another owner's", p)
		}
	}
	if got, want := withoutIdentity(listing(t, fork)), withoutIdentity(listing(t, e.dir)); got != want {
		t.Fatalf("the fork holds\n%s\nwant the snapshot's\n%s", got, want)
	}
}

// TestAForkNeverChangesTheStoresContentThroughALink: what a fork writes,
// truncates, re-modes or re-times over a file of its shared tree that is
// a link to the store's content is its own: the store's object keeps its
// content and its hash, a sibling still reads the snapshot's, a second
// snapshot of the same content with other details never changes the
// first tree's file, and a fork reads its files still once the store lets
// go of the object (as the content cache's eviction does).
func TestAForkNeverChangesTheStoresContentThroughALink(t *testing.T) {
	if os.Geteuid() != 0 {
		skipOrFailInCI(t, "a shared tree links the store's content only where boxsnap runs as root")
	}
	e := shareEnv(t, 64<<20)
	e.write(t, "etc/motd", "welcome")
	_, ref := e.take(t)
	a := e.fork(t, ref, "bxforka")
	b := e.fork(t, ref, "bxforkb")
	object := objectOf(e, "welcome")
	tree := (&overlay.Lowers{Store: e.b.Store}).Tree(ref.ID)
	if inode(t, filepath.Join(tree, "etc/motd")) != inode(t, object) {
		t.Fatal("the shared tree's file is not the store's object: nothing here is tested")
	}
	before := listing(t, tree)
	motd := filepath.Join(a, "etc/motd")
	if err := os.WriteFile(motd, []byte("changed by a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(motd, 3); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(motd, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(motd, time.Now(), time.Now()); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(object); err != nil || string(got) != "welcome" {
		t.Fatalf("the store's object holds %q (%v) after a fork's writes, want the snapshot's %q", got, err, "welcome")
	}
	if got := listing(t, tree); got != before {
		t.Fatalf("a fork's writes changed the shared tree:\n%s\nwant\n%s", got, before)
	}
	if got, err := os.ReadFile(filepath.Join(b, "etc/motd")); err != nil || string(got) != "welcome" {
		t.Fatalf("a sibling reads %q (%v), want the snapshot's", got, err)
	}

	// The same content with another mtime, in a second snapshot forked too.
	later := time.Date(2011, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(e.dir, "etc/motd"), later, later); err != nil {
		t.Fatal(err)
	}
	_, ref2 := e.take(t)
	c := e.fork(t, ref2, "bxforkc")
	if got := listing(t, tree); got != before {
		t.Fatalf("a second snapshot's tree changed the first's:\n%s\nwant\n%s", got, before)
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(filepath.Join(c, "etc/motd"), &st); err != nil || st.Mtim.Nano() != later.UnixNano() {
		t.Fatalf("the second snapshot's fork has mtime %d (%v), want its own %d", st.Mtim.Nano(), err, later.UnixNano())
	}

	// The store lets go of the object: the trees hold their files.
	if err := os.Remove(object); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(b, "etc/motd")); err != nil || string(got) != "welcome" {
		t.Fatalf("once the store let go of the object a fork reads %q (%v), want the snapshot's", got, err)
	}
}

// TestASweepCountsOnlyWhatItFrees: a sweep that removes a shared tree
// whose files are links to content its snapshot still holds says it freed
// less than that content (removing a name the store also holds frees
// nothing); a tree that holds the content's last name, its snapshot
// deleted, counts it when it goes.
func TestASweepCountsOnlyWhatItFrees(t *testing.T) {
	if os.Geteuid() != 0 {
		skipOrFailInCI(t, "a shared tree links the store's content only where boxsnap runs as root")
	}
	e := shareEnv(t, 64<<20)
	const size = 4 << 20
	data := make([]byte, size)
	_, _ = rand.Read(data)
	e.write(t, "data.bin", string(data))
	_, ref := e.take(t)
	e.fork(t, ref, "bxforka")
	tree := (&overlay.Lowers{Store: e.b.Store}).Tree(ref.ID)
	if inode(t, filepath.Join(tree, "data.bin")) != inode(t, objectOf(e, string(data))) {
		t.Fatal("the shared tree's file is not the store's object: nothing here is tested")
	}
	if err := e.b.Release(e.ctx, e.b.guestOf("bxforka", "linux")); err != nil {
		t.Fatal(err)
	}
	freed, err := e.b.Sweep(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(tree); err == nil {
		t.Fatal("the sweep left the shared tree no fork lies over")
	}
	if freed >= size {
		t.Fatalf("the sweep says it freed %d bytes removing a tree of links to content the store still holds, want less than the content's %d", freed, size)
	}
	// Forked again, then the snapshot deleted: the tree holds the
	// content's last name, and the sweep that removes it frees it.
	e.fork(t, ref, "bxforkb")
	if err := e.b.DeleteSnapshot(e.ctx, ref, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.b.Release(e.ctx, e.b.guestOf("bxforkb", "linux")); err != nil {
		t.Fatal(err)
	}
	freed, err = e.b.Sweep(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if freed < size {
		t.Fatalf("the sweep that removed the content's last name says it freed %d bytes, want at least its %d", freed, size)
	}
}
