package local

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/ship"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// cacheMargin is what a host's content may hold past ContentCacheBytes
// once an operation is done (the README says it): the chunk lists of its
// large files, a few KiB each.
const cacheMargin = 1 << 20

// writeRandom writes n bytes of random content, from seed, to path, a
// block at a time, and answers their SHA-256 as fileHash does: a file of
// hundreds of MiB is never held in memory.
func writeRandom(t *testing.T, path string, seed uint64, n int64) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	rng := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16)})
	if _, err := io.CopyN(io.MultiWriter(f, h), rng, n); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// cacheHeld is the bytes a host's content cache holds on its disk: every
// piece of content and every chunk list.
func cacheHeld(t *testing.T, b *Backend) int64 {
	t.Helper()
	var n int64
	for _, dir := range []string{b.Path(store.DirContent), b.Path(ship.DirLists)} {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			info, err := d.Info()
			if err == nil {
				n += info.Size()
			}
			return err
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	return n
}

// TestALargeChunkedFileThroughASmallCache: a file of several hundred MiB,
// split into chunks, taken on one host, is forked on another host whose
// content cache is bounded far below the file, byte-exact; the fork's own
// take and a restore to it, which fetches the file again, are byte-exact
// too; and after each the host's cache is within its bound.
func TestALargeChunkedFileThroughASmallCache(t *testing.T) {
	const size = 300 << 20
	const bound = 64 << 20
	e, objs, bucket := setupStored(t)
	want := writeRandom(t, filepath.Join(e.dir, "big.bin"), 29, size)
	_, ref := e.take(t)

	other := otherHost(t, objs, bucket, func(c *Config) { c.ContentCacheBytes = bound })
	there := env{b: other, ctx: e.ctx}
	there.dir = there.fork(t, ref, "bxlargethere")
	there.g = other.guestOf("bxlargethere", "linux")
	big := filepath.Join(there.dir, "big.bin")
	if fileHash(t, big) != want {
		t.Fatal("big.bin forked on the other host is not byte-exact")
	}
	if n := cacheHeld(t, other); n > bound+cacheMargin {
		t.Fatalf("after the fork the other host's cache holds %d bytes; its bound is %d (and %d more)", n, bound, cacheMargin)
	}

	// The fork's own snapshot, of the file changed at its start, and a
	// restore to it once the file changed again: the restore fetches the
	// file back, as the cache kept none of it.
	f, err := os.OpenFile(big, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte("changed on the other host "), 1000), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	changed := fileHash(t, big)
	_, mine := there.take(t)
	if n := cacheHeld(t, other); n > bound+cacheMargin {
		t.Fatalf("after the take the other host's cache holds %d bytes; its bound is %d (and %d more)", n, bound, cacheMargin)
	}
	writeRandom(t, big, 30, size/2)
	objs.mu.Lock()
	gets := objs.gets
	objs.mu.Unlock()
	if _, err := other.RestoreSnapshot(e.ctx, there.g, mine, providers.StepRollback, nil); err != nil {
		t.Fatalf("restore on the other host: %v", err)
	}
	objs.mu.Lock()
	fetched := objs.gets - gets
	objs.mu.Unlock()
	if fetched == 0 {
		t.Fatal("the restore fetched nothing from the bucket: the cache kept the file, and nothing here is tested")
	}
	if fileHash(t, big) != changed {
		t.Fatal("big.bin restored on the other host is not byte-exact")
	}
	if n := cacheHeld(t, other); n > bound+cacheMargin {
		t.Fatalf("after the restore the other host's cache holds %d bytes; its bound is %d (and %d more)", n, bound, cacheMargin)
	}
}
