package contents

import (
	"sync"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// comparePagesFor is how long the pages after a comparison's first read
// the list the first page made.
const comparePagesFor = 2 * time.Minute

// compareCacheSize is how many comparisons are kept for their next pages.
const compareCacheSize = 8

// compareCache keeps the last comparisons' lists for their next pages.
type compareCache struct {
	mu    sync.Mutex
	items map[string]cachedCompare
}

type cachedCompare struct {
	at  time.Time
	all []providers.FileChange
}

// get gives the list kept for key when a later page asks and it is fresh.
func (c *compareCache) get(key string, later bool, now time.Time) ([]providers.FileChange, bool) {
	if !later {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.items[key]
	if !ok || now.Sub(it.at) > comparePagesFor {
		return nil, false
	}
	return it.all, true
}

func (c *compareCache) put(key string, all []providers.FileChange, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.items == nil {
		c.items = map[string]cachedCompare{}
	}
	c.items[key] = cachedCompare{at: now, all: all}
	for len(c.items) > compareCacheSize {
		oldest := ""
		for k, it := range c.items {
			if oldest == "" || it.at.Before(c.items[oldest].at) {
				oldest = k
			}
		}
		delete(c.items, oldest)
	}
}
