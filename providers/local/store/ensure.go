package store

import "context"

// FileUnshipped marks a snapshot published on this host whose take has
// not yet put it wholly in the content store: it is not ready, and it is
// held incomplete until its take, resumed, ships it.
const FileUnshipped = "unshipped"

// EnsureContent brings the content of need (hash to size) this host
// lacks from the content store, when there is one, so a read of it finds
// it: with a content store the host's content is a cache, and a file of a
// shipped snapshot may have left it.
func (b *Store) EnsureContent(ctx context.Context, need map[string]int64) error {
	if b.Fetch == nil || len(need) == 0 {
		return nil
	}
	return b.Fetch(ctx, need)
}
