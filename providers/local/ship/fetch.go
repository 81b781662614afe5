package ship

import (
	"context"
	"fmt"
	"os"
	"sort"

	"github.com/boxsnap/boxsnap/providers/local/objstore"
)

// Fetch brings the content of need (hash to size) this host lacks from
// the bucket, each object checked against its hash, and the whole against
// the content's, before it joins the host's content: nothing unchecked is
// ever written into a box. A missing or corrupt object answers an
// *objstore.ObjectError (providers.ErrIncomplete): the snapshot is damaged.
func (s *Shipper) Fetch(ctx context.Context, need map[string]int64) error {
	return s.FetchTo(ctx, need, nil, true)
}

// FetchTo is Fetch that also hands sink (when not nil) each piece of
// content it brings whole, checked, as it comes: a restore or fork writes
// its files from the bytes in hand, while the rest are still coming,
// rather than read each back from the host's content once all are there.
// Content this host holds already, and a large file put together from its
// chunks, are not handed on. With keep false (and a sink), a piece handed
// on is not also kept in the host's content: a fork writes each of its
// files once, in the box, where a second copy in the cache would double
// its writes and its files made, and serve no take of the fork (whose
// files are new inodes, each read again at its first take). A large file
// is kept either way: it is put together in the host's content.
func (s *Shipper) FetchTo(ctx context.Context, need map[string]int64, sink Sink, keep bool) error {
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
	return s.fetchMissing(ctx, missing, need, sink, keep || sink == nil)
}

// corruptOr is the refusal of a manifest or label fetched whole that
// does not read as one (its checksum line does not match).
func corruptOr(key string, s *Shipper, err error) error {
	if err == nil {
		err = fmt.Errorf("it names another snapshot")
	}
	return fmt.Errorf("%w (%v)", objstore.Corrupt(s.Remote.Keys, key), err)
}
