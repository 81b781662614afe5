package ship

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"

	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// Fetch brings the content of need (hash to size) this host lacks from
// the bucket, each object checked against its hash, and the whole against
// the content's, before it joins the host's content: nothing unchecked is
// ever written into a box. A missing or corrupt object answers an
// *objstore.ObjectError (providers.ErrIncomplete): the snapshot is damaged.
func (s *Shipper) Fetch(ctx context.Context, need map[string]int64) error {
	var missing []string
	for h := range need {
		if _, err := os.Lstat(s.ContentPath(h)); err != nil {
			missing = append(missing, h)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if s == nil || s.Remote == nil {
		return fmt.Errorf("%d pieces of content are not on this host and %w", len(missing), ErrNoContentStore)
	}
	sort.Strings(missing)
	// The first failure stops the rest: an unreachable store is said at
	// once, not after a try of every object.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	ch := make(chan string)
	for range max(s.Workers, shipWorkers) {
		wg.Go(func() {
			for h := range ch {
				if err := s.fetchOne(ctx, h, need[h]); err != nil {
					mu.Lock()
					if first == nil {
						first = err
						cancel()
					}
					mu.Unlock()
				}
			}
		})
	}
feed:
	for _, h := range missing {
		select {
		case ch <- h:
		case <-ctx.Done():
			break feed
		}
	}
	close(ch)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// fetchOne fetches content h into a temporary file, checks it whole, and
// renames it into the host's content, read-only.
func (s *Shipper) fetchOne(ctx context.Context, h string, size int64) error {
	f, err := os.CreateTemp(s.Path(store.DirTmp), "fetch-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		_ = f.Close()
		_ = os.Remove(tmp)
	}()
	keys := s.Remote.Keys
	key := keys.ContentKey(h)
	if size <= ChunkAbove {
		if err := s.Remote.Objects.Get(ctx, key, h, f); err != nil {
			return err
		}
	} else {
		key = keys.ListKey(h)
		var list bytes.Buffer
		if err := s.Remote.Objects.Get(ctx, key, "", &list); err != nil {
			return err
		}
		chunks, err := parseList(list.Bytes())
		if err != nil {
			return objstore.Corrupt(keys, key)
		}
		for _, c := range chunks {
			if err := s.Remote.Objects.Get(ctx, keys.ContentKey(c.sum), c.sum, f); err != nil {
				return err
			}
		}
		if err := os.MkdirAll(s.Path(DirLists), 0o700); err == nil {
			_ = store.WriteFileAtomic(s.Path(DirLists, h), list.Bytes(), 0o600)
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	sum := sha256.New()
	n, err := io.Copy(sum, f)
	if err != nil {
		return err
	}
	if hex.EncodeToString(sum.Sum(nil)) != h || n != size {
		return objstore.Corrupt(keys, key)
	}
	if err := f.Chmod(0o444); err != nil {
		return err
	}
	return os.Rename(tmp, s.ContentPath(h))
}

// corruptOr is the refusal of a manifest or label fetched whole that
// does not read as one (its checksum line does not match).
func corruptOr(key string, s *Shipper, err error) error {
	if err == nil {
		err = fmt.Errorf("it names another snapshot")
	}
	return fmt.Errorf("%w (%v)", objstore.Corrupt(s.Remote.Keys, key), err)
}
