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
	return s.FetchTo(ctx, need, nil)
}

// FetchTo is Fetch that also hands sink (when not nil) each piece of
// content it brings whole, checked, as it comes: a restore or fork writes
// its files from the bytes in hand, while the rest are still coming,
// rather than read each back from the host's content once all are there.
// Content this host holds already, and a large file put together from its
// chunks, are not handed on.
func (s *Shipper) FetchTo(ctx context.Context, need map[string]int64, sink Sink) error {
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
	return s.fetchMissing(ctx, missing, need, sink)
}

// corruptOr is the refusal of a manifest or label fetched whole that
// does not read as one (its checksum line does not match).
func corruptOr(key string, s *Shipper, err error) error {
	if err == nil {
		err = fmt.Errorf("it names another snapshot")
	}
	return fmt.Errorf("%w (%v)", objstore.Corrupt(s.Remote.Keys, key), err)
}
