package local

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/overlay"
)

// TestForkFromTheBucketWritesEachFileOnce: a fork on another host, its
// cache empty, writes each small file it fetches once, in the box, each a
// file of its own; the host's content does not get a second copy of it.
// A restore there keeps what it fetches in the host's content, since the
// box's next take reuses it by its hash.
func TestForkFromTheBucketWritesEachFileOnce(t *testing.T) {
	e, objs, bucket := setupStored(t)
	files := map[string][]byte{
		"a.txt":     []byte("alpha\n"),
		"same.txt":  []byte("alpha\n"),
		"sub/b.bin": randomBytes(t, 300<<10),
	}
	writeFiles(t, e.dir, files, 0o640)
	_, ref := e.take(t)
	b := otherHost(t, objs, bucket)
	g, err := b.ForkSnapshot(e.ctx, ref, providers.BoxIdentity{ID: "bxforkedonce1", Kind: "linux"}, nil)
	if err != nil {
		t.Fatalf("fork on the other host: %v", err)
	}
	for name, want := range files {
		p := filepath.Join(b.BoxDir(g), name)
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s forked on the other host is not byte-exact (%v)", name, err)
		}
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil || st.Nlink != 1 {
			t.Fatalf("%s in the fork has %d links (%v); want a file of its own", name, st.Nlink, err)
		}
		if _, err := os.Stat(b.ContentPath(hashOf(want))); err == nil {
			t.Fatalf("%s was written twice on the other host: in the fork and in the host's content", name)
		}
	}
	// A restore onto a third host keeps what it fetched.
	c := otherHost(t, objs, bucket)
	moved, err := c.Acquire(e.ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: e.g.Ref, Kind: "linux"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.RestoreSnapshot(e.ctx, moved, ref, providers.StepRollback, nil); err != nil {
		t.Fatalf("restore on a third host: %v", err)
	}
	for name, want := range files {
		if got, err := os.ReadFile(filepath.Join(c.BoxDir(moved), name)); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s restored on a third host is not byte-exact (%v)", name, err)
		}
		if _, err := os.Stat(c.ContentPath(hashOf(want))); err != nil {
			t.Fatalf("%s restored on a third host is not in its content, for the next take: %v", name, err)
		}
	}
}

// TestASharedForkFromTheBucketLinksWhatItFetched: where forks share one
// tree of their snapshot's files, a fork on another host, its cache
// empty, fetches each object once into the host's content and makes the
// tree of links to it, not a second copy; the box's writes never reach
// the object.
func TestASharedForkFromTheBucketLinksWhatItFetched(t *testing.T) {
	if os.Geteuid() != 0 {
		skipOrFailInCI(t, "a shared tree links the store's content only where boxsnap runs as root")
	}
	loopOrSkip(t)
	if why, _ := overlay.Probe(t.TempDir()); why != "" {
		skipOrFailInCI(t, "forks cannot share a tree here: "+why)
	}
	e, objs, bucket := setupStored(t)
	files := map[string][]byte{"a.txt": []byte("alpha\n"), "b.bin": randomBytes(t, 300<<10)}
	writeFiles(t, e.dir, files, 0o644)
	_, ref := e.take(t)
	b := otherHost(t, objs, bucket, func(c *Config) { c.DiskImages = true })
	g, err := b.ForkSnapshot(e.ctx, ref, providers.BoxIdentity{ID: "bxsharedthere1", Kind: "linux"}, nil)
	if err != nil {
		t.Fatalf("fork on the other host: %v", err)
	}
	tree := (&overlay.Lowers{Store: b.Store}).Tree(ref.ID)
	for name, want := range files {
		object := b.ContentPath(hashOf(want))
		if _, err := os.Stat(filepath.Join(tree, name)); err != nil {
			t.Fatalf("the fork lies over no shared tree here, so nothing is tested: %v", err)
		}
		if inode(t, filepath.Join(tree, name)) != inode(t, object) {
			t.Fatalf("the shared tree's %s is a second copy of what was fetched, not a link to the host's content", name)
		}
		if got, err := os.ReadFile(filepath.Join(b.BoxDir(g), name)); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s forked on the other host is not byte-exact (%v)", name, err)
		}
		if err := os.WriteFile(filepath.Join(b.BoxDir(g), name), []byte("the box's own"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(object); !bytes.Equal(got, want) {
			t.Fatalf("a write in the fork changed the host's content of %s", name)
		}
	}
}
