package ship

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers/local/store"
)

// Evict keeps the host's content under CacheBytes, a cache of the
// bucket: it removes the content least recently read first, only content
// that no snapshot still waiting to ship names (a shipped snapshot's is
// in the bucket, and a read fetches it back). Content a shared tree's
// file is a link to is neither counted nor removed: removing its name
// here would free none of its room, which the tree holds, and the next
// read would fetch it again. It runs under the store lock held exclusive,
// so no take reuses content it removes; it takes no lock and counts
// nothing when the whole file system holds less than the bound. What it
// counts it records (LastCount), so Settings' Hosts page says it without
// counting again. It answers the bytes it removed.
func (s *Shipper) Evict(ctx context.Context) (int64, error) {
	if s == nil || s.Remote == nil || s.CacheBytes <= 0 {
		return 0, nil
	}
	limit := s.CacheBytes
	if fsUsedUnder(s.Path(store.DirContent), limit) {
		return 0, nil
	}
	lock, err := s.LockStore(ctx, true)
	if err != nil {
		return 0, err
	}
	defer lock.Unlock()
	keep, err := s.unshippedContent()
	if err != nil {
		return 0, err
	}
	all, total, err := cacheFiles(s.Store, keep)
	if err != nil {
		return 0, err
	}
	if total <= limit {
		s.recordCount(total)
		return 0, nil
	}
	sort.Slice(all, func(i, j int) bool { return all[i].atime < all[j].atime })
	var freed int64
	for _, c := range all {
		if total-freed <= limit {
			break
		}
		if err := os.Remove(c.path); err == nil {
			freed += c.size
		}
	}
	s.recordCount(total - freed)
	s.Log.Debug("local backend: the content cache was brought under its bound", "bound", limit, "held", total-freed, "removed", freed)
	return freed, nil
}

// fsUsedUnder reports whether everything the file system holding dir
// holds is at most limit bytes, so the content in dir cannot be over it:
// one statfs, where counting the content stats every file of it (about
// 200 ms of CPU for 46,000 files). With the default bound, a quarter of
// the file system, a host whose disk is less than a quarter full never
// walks its content.
func fsUsedUnder(dir string, limit int64) bool {
	used, ok := FileSystemUsed(dir)
	return ok && used <= limit
}

// FileSystemUsed is everything the file system holding dir holds, in
// bytes, read in one statfs; ok is false when it cannot be read.
func FileSystemUsed(dir string) (used int64, ok bool) {
	var sf unix.Statfs_t
	if unix.Statfs(dir, &sf) != nil {
		return 0, false
	}
	return int64(sf.Blocks-sf.Bfree) * sf.Bsize, true
}

// CacheCount is a count of the content cache: what it held against its
// bound (CacheHeld's figure) and when it was counted.
type CacheCount struct {
	Held int64     `json:"held"`
	At   time.Time `json:"at"`
}

// recordCount records held, counted now, as the cache's last count
// (store.FileCacheCount), replacing the one before: each process on the
// data folder reads it there. A failure is logged: the next count writes
// it again.
func (s *Shipper) recordCount(held int64) {
	if err := RecordCount(s.Store, CacheCount{Held: held, At: time.Now()}); err != nil {
		s.Log.Warn("local backend: could not record the content cache's count", "err", err)
	}
}

// RecordCount records c as st's content cache's last count.
func RecordCount(st *store.Store, c CacheCount) error {
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return store.ReplaceFile(st.Path(store.FileCacheCount), data, 0o600)
}

// LastCount is the content cache's count as last recorded (by Evict, or
// by RecordCount); ok is false when none is, or it cannot be read.
func LastCount(st *store.Store) (c CacheCount, ok bool) {
	data, err := os.ReadFile(st.Path(store.FileCacheCount))
	if err != nil || json.Unmarshal(data, &c) != nil || c.At.IsZero() || c.Held < 0 {
		return CacheCount{}, false
	}
	return c, true
}

// cached is a content file the cache holds: its path, size and last read.
type cached struct {
	path  string
	size  int64
	atime int64
}

// cacheFiles walks st's content: total is what the cache holds against
// its bound, and all the files of it whose hash keep does not name. A
// file with more than one link (a shared tree's) is neither counted nor
// listed.
func cacheFiles(st *store.Store, keep map[string]bool) (all []cached, total int64, err error) {
	err = filepath.WalkDir(st.Path(store.DirContent), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		var sb unix.Stat_t
		if unix.Lstat(p, &sb) != nil || sb.Nlink > 1 {
			return nil
		}
		total += sb.Size
		h := filepath.Base(filepath.Dir(p)) + d.Name()
		if keep != nil && !keep[h] {
			all = append(all, cached{path: p, size: sb.Size, atime: sb.Atim.Nano()})
		}
		return nil
	})
	return all, total, err
}

// CacheHeld is the content st's cache holds against its bound, as Evict
// counts it: every content file but a shared tree's.
func CacheHeld(st *store.Store) (int64, error) {
	_, total, err := cacheFiles(st, nil)
	return total, err
}

// unshippedContent is the content named by the snapshots on this host
// not yet wholly in the bucket: it must stay.
func (s *Shipper) unshippedContent() (map[string]bool, error) {
	keep := map[string]bool{}
	ents, err := os.ReadDir(s.Path(store.DirSnapshots))
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		id := e.Name()
		if strings.HasPrefix(id, ".") || s.Shipped(id) {
			continue
		}
		m, err := s.Manifest(id)
		if err != nil {
			continue // a snapshot with no manifest names nothing here
		}
		for h := range m.Hashes() {
			keep[h] = true
		}
	}
	return keep, nil
}
