package ship

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

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
// so no take reuses content it removes. It answers the bytes it removed.
func (s *Shipper) Evict(ctx context.Context) (int64, error) {
	if s == nil || s.Remote == nil || s.CacheBytes <= 0 {
		return 0, nil
	}
	limit := s.CacheBytes
	lock, err := s.LockStore(ctx, true)
	if err != nil {
		return 0, err
	}
	defer lock.Unlock()
	keep, err := s.unshippedContent()
	if err != nil {
		return 0, err
	}
	type cached struct {
		path  string
		size  int64
		atime int64
	}
	var all []cached
	var total int64
	err = filepath.WalkDir(s.Path(store.DirContent), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil || st.Nlink > 1 {
			return nil
		}
		total += st.Size
		h := filepath.Base(filepath.Dir(p)) + d.Name()
		if !keep[h] {
			all = append(all, cached{path: p, size: st.Size, atime: st.Atim.Nano()})
		}
		return nil
	})
	if err != nil || total <= limit {
		return 0, err
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
	s.Log.Debug("local backend: the content cache was brought under its bound", "bound", limit, "held", total-freed, "removed", freed)
	return freed, nil
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
