package hosts

import (
	"context"
	"fmt"

	"github.com/boxsnap/boxsnap/providers"
)

// Cache is what the Hosts page says of this host's content cache, its
// bound and how full it is (CacheWords) as the backend last counted it,
// never counting it for the page, or "" when no backend keeps its content
// here as a cache of a bucket.
func (h *Hosts) Cache(ctx context.Context) (string, error) {
	for _, be := range h.k.Backends() {
		cc, ok := be.Snap.(providers.ContentCache)
		if !ok {
			continue
		}
		u, ok, err := cc.ContentCacheUse(ctx)
		if err != nil {
			return "", fmt.Errorf("hosts: %s's content cache: %w", be.ID, err)
		}
		if ok {
			return CacheWords(u, h.now()), nil
		}
	}
	return "", nil
}
