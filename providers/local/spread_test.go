package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers/local/overlay"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// topDirFlag is ext4's FS_TOPDIR_FL (chattr +T), as store.SpreadFolders
// sets it.
const topDirFlag = 0x00020000

// inodeFlags reads dir's inode flags (lsattr), or skips where its file
// system keeps none.
func inodeFlags(t *testing.T, dir string) uint32 {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	if err != nil {
		skipOrFailInCI(t, "the file system under "+dir+" keeps no inode flags: "+err.Error())
	}
	return flags
}

// TestATakesNewContentIsMadeInAFolderPlacedApart: the store's tmp folder
// is marked so ext4 places each folder made in it apart (chattr +T), and
// a take makes its new content in a folder of its own there, removed once
// the take is done: on a file system without a journal, a take's new
// files beside folders where many files were just removed cost a scan of
// the inodes they freed each. The content is what it was: whole, named
// by its hash, and a second take of the same files copies none.
func TestATakesNewContentIsMadeInAFolderPlacedApart(t *testing.T) {
	e := setup(t)
	tmp := e.b.Path(store.DirTmp)
	if inodeFlags(t, tmp)&topDirFlag == 0 {
		t.Fatalf("the store's tmp folder is not marked to place its folders apart (flags %#x)", inodeFlags(t, tmp))
	}
	for i := range 20 {
		e.write(t, filepath.Join("d", "f"+string(rune('a'+i))), strings.Repeat("x", i*100))
	}
	var during []string
	e.b.hooks.AfterCopy = func(string) {
		ents, _ := os.ReadDir(tmp)
		for _, d := range ents {
			during = append(during, d.Name())
		}
	}
	_, ref := e.take(t)
	e.b.hooks.AfterCopy = nil
	if len(during) == 0 {
		t.Fatal("the take copied nothing")
	}
	for _, name := range during {
		if !strings.HasPrefix(name, "take-") {
			t.Fatalf("while the take copied, the store's tmp held %q, not a take's folder", name)
		}
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Fatalf("the take left %d entries in the store's tmp, first %s", len(ents), ents[0].Name())
	}
	m, err := e.b.Store.LoadUsable(ref)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range m.Entries {
		if en.Type != store.TypeFile {
			continue
		}
		h, n, err := e.b.Copier.HashPath(e.b.ContentPath(en.Hash))
		if err != nil || h != en.Hash || n != en.Size {
			t.Fatalf("%s: its content %s is %s, %d bytes (%v)", en.Path, en.Hash[:12], h, n, err)
		}
	}
	_, again := e.take(t)
	m2, err := e.b.Store.LoadUsable(again)
	if err != nil {
		t.Fatal(err)
	}
	if m2.AddedBytes != 0 {
		t.Fatalf("a second take of the same files added %d bytes", m2.AddedBytes)
	}
}

// TestASharedTreeIsMadeInAFolderPlacedApart: the shared trees' folder is
// marked as the store's tmp is, so each tree's folders, links and copies
// are made where ext4 places the tree's folder then.
func TestASharedTreeIsMadeInAFolderPlacedApart(t *testing.T) {
	e := shareEnv(t, 64<<20)
	e.write(t, "a/b", "shared")
	_, ref := e.take(t)
	e.fork(t, ref, "bxapart1")
	lowers := e.b.Path(overlay.DirLowers)
	if inodeFlags(t, lowers)&topDirFlag == 0 {
		t.Fatalf("the shared trees' folder is not marked to place its folders apart (flags %#x)", inodeFlags(t, lowers))
	}
}
