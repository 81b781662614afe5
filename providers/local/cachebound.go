package local

import "context"

// keepCacheBound brings the host's content cache back under
// ContentCacheBytes after a restore or a fork that read through it: a
// fetch puts what it brings into the cache (a large file whole, however
// far past the bound), and only a take's end evicted before, so a host
// that restores and forks but never takes kept all it ever fetched. A
// failure is logged, not answered: the box's files are in place.
func keepCacheBound(ctx context.Context, b *Backend) {
	if _, err := b.shipper.Evict(ctx); err != nil {
		b.log.Warn("local backend: after a restore or a fork, the content cache could not be brought under its bound", "err", err)
	}
}
