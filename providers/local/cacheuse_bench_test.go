package local

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/objstore/s3test"
	"github.com/boxsnap/boxsnap/providers/local/ship"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// benchCacheObjects is how many content files BenchmarkContentCacheUse's
// cache holds: as many as a take of /usr/share made here (46,511).
const benchCacheObjects = 46511

// BenchmarkContentCacheUse is what Settings → Hosts asks of the local
// backend each time it is drawn (ContentCacheUse), on a content cache of
// benchCacheObjects files of 1 to 4 KiB, its bound under what the file
// system holds, so a count cannot be skipped by asking the file system
// first; beside it, the walk that counts the cache (ship.CacheHeld).
// cpu-ms/op is the process's CPU time (user and system) per call, which
// other work on a shared host moves less than the wall time.
func BenchmarkContentCacheUse(b *testing.B) {
	srv := s3test.Start(b)
	cfg := srv.Bucket(b)
	bucket, err := objstore.Open(cfg)
	if err != nil {
		b.Fatal(err)
	}
	be, err := New(Config{Root: b.TempDir(), Install: "in-bench", NoSync: true, ContentCacheBytes: 1 << 20,
		ContentStore: &ship.Remote{Objects: bucket, Keys: cfg}})
	if err != nil {
		b.Fatal(err)
	}
	unmountAtEnd(b, be)
	for i := range benchCacheObjects {
		sum := sha256.Sum256(fmt.Appendf(nil, "object %d", i))
		h := hex.EncodeToString(sum[:])
		p := be.Path(store.DirContent, h[:2], h[2:])
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, 1024+i%3072), 0o444); err != nil {
			b.Fatal(err)
		}
	}
	cpu := func() time.Duration {
		var ru unix.Rusage
		_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b.Run("page", func(b *testing.B) {
		start := cpu()
		for b.Loop() {
			if _, ok, err := be.ContentCacheUse(b.Context()); err != nil || !ok {
				b.Fatalf("ContentCacheUse: %v (a cache: %v)", err, ok)
			}
		}
		b.ReportMetric(float64(cpu()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	})
	b.Run("walk", func(b *testing.B) {
		start := cpu()
		for b.Loop() {
			if _, err := ship.CacheHeld(be.Store); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(cpu()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	})
}
