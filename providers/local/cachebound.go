package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/ship"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// DefaultCachePercent is the share of the file system holding the local
// backend's folder that its content cache holds at most with a content
// store, when Config.ContentCacheBytes is 0 and Config.ContentCachePercent
// names none (BOXSNAP_CONTENT_CACHE_SIZE's default, 25%). A quarter, as
// the room rule refuses new snapshots once the host's disk is past its
// room setting, 50 to 90% full (85% by default): a cache of a quarter can
// never by itself bring a host to even the strictest room setting, and
// leaves the rest to the boxes' own files, the snapshots not shipped yet
// (which eviction never removes) and the database.
const DefaultCachePercent = 25

// NoCacheBound, as Config.ContentCacheBytes, keeps all the content on
// this host (BOXSNAP_CONTENT_CACHE_SIZE=0).
const NoCacheBound = -1

var _ providers.ContentCache = (*Backend)(nil)

// cacheBound is the content cache's bound as Config sets it, the cache
// being in the folder dir: bytes when over 0, none when under 0, else
// percent (DefaultCachePercent when 0) of the size of dir's file system.
// Its FileSystem is that size; its Held is left 0.
func cacheBound(dir string, bytes int64, percent int) (providers.CacheUse, error) {
	var sf unix.Statfs_t
	if err := unix.Statfs(dir, &sf); err != nil {
		return providers.CacheUse{}, fmt.Errorf("the size of the file system holding %s: %w", dir, err)
	}
	u := providers.CacheUse{FileSystem: int64(sf.Blocks) * sf.Bsize}
	switch {
	case bytes > 0:
		u.Bound = bytes
	case bytes == 0:
		u.Percent = percent
		if u.Percent <= 0 {
			u.Percent = DefaultCachePercent
		}
		u.Bound = u.FileSystem / 100 * int64(u.Percent)
	}
	return u, nil
}

// CacheUse is the content cache of the local backend's folder root
// against the bound bytes and percent set (as Config's
// ContentCacheBytes and ContentCachePercent), for boxsnap doctor, which
// reads the folder without a backend.
func CacheUse(root string, bytes int64, percent int) (providers.CacheUse, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return providers.CacheUse{}, err
	}
	st := store.NewStore(abs)
	u, err := cacheBound(abs, bytes, percent)
	if err != nil {
		return providers.CacheUse{}, err
	}
	if u.Held, err = ship.CacheHeld(st); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return providers.CacheUse{}, fmt.Errorf("the content in %s: %w", abs, err)
	}
	return u, nil
}

// ContentCacheUse answers how much this host's content cache holds
// against its bound (providers.ContentCache), without counting it each
// time it is asked (a count stats every file of it: 183 ms of CPU for
// 46,511 files, BenchmarkContentCacheUse): when the whole file system
// holding it holds no more than the bound, or there is no bound, that,
// read in one look (CacheUse.UpTo); else the count the last eviction
// recorded (ship.LastCount: a take's, restore's or fork's end, by any
// process on this data folder), with when. Only with none on record does
// it count the cache, and records that count. ok is false with no content
// store.
func (b *Shipping) ContentCacheUse(ctx context.Context) (providers.CacheUse, bool, error) {
	if b.shipper == nil || b.shipper.Remote == nil {
		return providers.CacheUse{}, false, nil
	}
	u := b.cache
	if used, ok := ship.FileSystemUsed(b.st.Path()); ok && (u.Bound <= 0 || used <= u.Bound) {
		u.Held, u.UpTo = used, true
		return u, true, ctx.Err()
	}
	c, ok := ship.LastCount(b.st)
	if !ok {
		held, err := ship.CacheHeld(b.st)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return providers.CacheUse{}, true, fmt.Errorf("local backend: the content cache: %w", err)
		}
		c = ship.CacheCount{Held: held, At: time.Now()}
		if err := ship.RecordCount(b.st, c); err != nil {
			b.log.Warn("local backend: could not record the content cache's count", "err", err)
		}
	}
	u.Held, u.CountedAt = c.Held, c.At
	return u, true, ctx.Err()
}

// keepCacheBound brings the host's content cache back under its bound
// after a restore or a fork that read through it: a
// fetch puts what it brings into the cache (a large file whole, however
// far past the bound), and only a take's end evicted before, so a host
// that restores and forks but never takes kept all it ever fetched. A
// failure is logged, not answered: the box's files are in place.
func keepCacheBound(ctx context.Context, b *Backend) {
	if _, err := b.shipper.Evict(ctx); err != nil {
		b.log.Warn("local backend: after a restore or a fork, the content cache could not be brought under its bound", "err", err)
	}
}
