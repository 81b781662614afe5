package local

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/objstore/s3test"
	"github.com/boxsnap/boxsnap/providers/local/overlay"
	"github.com/boxsnap/boxsnap/providers/local/ship"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// TestTheCacheEvictionNeverBreaksASharedTree: with a content store, the
// host's content is a cache the eviction removes the least recently read
// of, but never an object a shared tree's file is a link to (its room is
// the tree's; removing the name would free nothing and the next read
// would fetch it again): the forks over the tree, and a fork made after,
// read the snapshot's bytes, and the object stays.
func TestTheCacheEvictionNeverBreaksASharedTree(t *testing.T) {
	if os.Geteuid() != 0 {
		skipOrFailInCI(t, "a shared tree links the store's content only where boxsnap runs as root")
	}
	loopOrSkip(t)
	if why, _ := overlay.Probe(t.TempDir()); why != "" {
		skipOrFailInCI(t, "forks cannot share a tree here: "+why)
	}
	srv := s3test.Start(t)
	cfg := srv.Bucket(t)
	bucket, err := objstore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const size = 600 << 10
	b, err := New(Config{Root: t.TempDir(), Install: "in-test", NoSync: true, StopTimeout: 2 * time.Second, DiskImages: true,
		ContentStore: &ship.Remote{Objects: bucket, Keys: cfg}, ContentCacheBytes: 4*size + size/2})
	if err != nil {
		t.Fatal(err)
	}
	unmountAtEnd(t, b)
	g, err := b.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: "bx" + store.RandomSuffix()[:12], Kind: "linux"},
		Limits: providers.BoxLimits{DiskBytes: 64 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	e := env{b: b, g: g, dir: b.BoxDir(g), ctx: t.Context()}
	files := map[string][]byte{}
	for _, name := range []string{"a.bin", "b.bin", "c.bin", "d.bin"} {
		files[name] = randomBytes(t, size)
		e.write(t, name, string(files[name]))
	}
	_, ref := e.take(t)
	fork := e.fork(t, ref, "bxforka")
	tree := (&overlay.Lowers{Store: b.Store}).Tree(ref.ID)
	object := objectOf(e, string(files["a.bin"]))
	if inode(t, filepath.Join(tree, "a.bin")) != inode(t, object) {
		t.Fatal("the shared tree's a.bin is not the store's object: nothing here is tested")
	}
	// a.bin's object is the least recently read: the eviction takes it first.
	for i, name := range []string{"a.bin", "b.bin", "c.bin", "d.bin"} {
		ts := []unix.Timespec{unix.NsecToTimespec(int64(i+1) * int64(time.Second)), {Nsec: unix.UTIME_OMIT}}
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, objectOf(e, string(files[name])), ts, 0); err != nil {
			t.Fatal(err)
		}
	}
	e.write(t, "e.bin", string(randomBytes(t, size)))
	e.take(t)
	if _, err := os.Lstat(object); err != nil {
		t.Fatalf("the eviction removed a.bin's object, which the shared tree links: %v", err)
	}
	later := e.fork(t, ref, "bxforkb")
	for _, dir := range []string{fork, later} {
		for name, want := range files {
			if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("after the eviction %s reads %d bytes (%v) of %s, want the snapshot's %d, byte-exact", dir, len(got), err, name, len(want))
			}
		}
	}
}
