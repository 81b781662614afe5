package local

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/objstore/s3test"
	"github.com/boxsnap/boxsnap/providers/local/ship"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// TestContentCacheBoundedByDefault: with a content store and no bound
// set, the host's content is bounded by DefaultCachePercent of its file
// system (a tmpfs of 96 MiB here, so 24 MiB): takes whose content comes
// to more than that leave the cache under it after each, and every
// snapshot, its content gone from the host, restores byte-exact, fetched
// back from a real versitygw, the cache under its bound after each.
func TestContentCacheBoundedByDefault(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		skipOrFailOnCI(t, "mounting a small file system needs root")
	}
	root := passable(t)
	if err := unix.Mount("tmpfs", root, "tmpfs", 0, "size=96m,mode=0711"); err != nil {
		skipOrFailOnCI(t, "no tmpfs here: "+err.Error())
	}
	t.Cleanup(func() { _ = unix.Unmount(root, unix.MNT_DETACH) })
	srv := s3test.Start(t)
	cfg := srv.Bucket(t)
	bucket, err := objstore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(Config{Root: root, Install: "in-test", NoSync: true, StopTimeout: 2 * time.Second,
		ContentStore: &ship.Remote{Objects: bucket, Keys: cfg}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	unmountAtEnd(t, b)
	use, ok, err := b.ContentCacheUse(t.Context())
	if err != nil || !ok {
		t.Fatalf("ContentCacheUse: %v (a cache: %v)", err, ok)
	}
	var sf unix.Statfs_t
	if err := unix.Statfs(root, &sf); err != nil {
		t.Fatal(err)
	}
	fsSize := int64(sf.Blocks) * sf.Bsize
	if use.Bound != fsSize/100*DefaultCachePercent || use.Percent != DefaultCachePercent || use.FileSystem != fsSize {
		t.Fatalf("the default bound reads %+v; want %d%% of the %d bytes of its file system", use, DefaultCachePercent, fsSize)
	}
	bound := use.Bound
	g, err := b.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: "bx" + store.RandomSuffix()[:12], Kind: "linux"}})
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	e := env{b: b, g: g, dir: b.BoxDir(g), ctx: t.Context()}
	underBound := func(after string) {
		t.Helper()
		u, _, err := b.ContentCacheUse(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if u.Held > bound {
			t.Fatalf("after %s the cache holds %d bytes; its default bound is %d", after, u.Held, bound)
		}
		if n := contentBytes(t, b); n > bound+cacheMargin {
			t.Fatalf("after %s the host keeps %d bytes of content; its default bound is %d", after, n, bound)
		}
	}

	// Each take brings 8 MiB of new content: a file under the size that
	// is chunked and one over it. Four of them hold 32 MiB.
	type taken struct {
		ref   providers.SnapshotRef
		files map[string][]byte
	}
	var snaps []taken
	for i := 0; i < 4; i++ {
		files := map[string][]byte{"small.bin": randomBytes(t, 3<<20), "large.bin": randomBytes(t, 5<<20)}
		writeFiles(t, e.dir, files, 0o644)
		_, ref := e.take(t)
		snaps = append(snaps, taken{ref, files})
		underBound(fmt.Sprintf("take %d", i+1))
	}
	for i, s := range snaps {
		if err := e.restore(t, s.ref); err != nil {
			t.Fatalf("restore of take %d: %v", i+1, err)
		}
		for name, want := range s.files {
			if got, err := os.ReadFile(filepath.Join(e.dir, name)); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s restored from take %d is not byte-exact (%v)", name, i+1, err)
			}
		}
		underBound(fmt.Sprintf("the restore of take %d", i+1))
	}
}

// skipOrFailOnCI skips a test this machine cannot run, and fails it under
// CI=true, where every test must run.
func skipOrFailOnCI(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(why + " (CI=true: it must run)")
	}
	t.Skip(why)
}
