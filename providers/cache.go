package providers

import (
	"context"
	"time"
)

// ContentCache is a backend whose snapshots' content this host keeps as a
// cache of a bucket every host reaches (the local backend with a content
// store): the Hosts page and boxsnap doctor say its bound and how full it
// is.
type ContentCache interface {
	// ContentCacheUse answers how much the cache holds against its bound;
	// ok is false when the backend keeps no cache (no content store).
	ContentCacheUse(ctx context.Context) (use CacheUse, ok bool, err error)
}

// CacheUse is a host's content cache against its bound.
type CacheUse struct {
	// Held is the content the cache holds against its bound, in bytes.
	Held int64
	// Bound is the most it holds once a take, a restore or a fork ends;
	// 0: no bound, it keeps everything.
	Bound int64
	// Percent is the share of the file system the bound is, when the
	// setting names a share (as by default); 0 when it names a size.
	Percent int
	// FileSystem is the size of the file system holding the cache, in
	// bytes.
	FileSystem int64
	// CountedAt is when Held was counted, where it is a count recorded
	// earlier (at the end of a take, a restore or a fork); zero when it
	// was counted as it was asked.
	CountedAt time.Time
	// UpTo says Held is not the cache's own count but all the file system
	// holding it holds, read in one look as within the bound (or with no
	// bound): the cache holds at most that.
	UpTo bool
}
