package store

import (
	"context"
	"errors"
	"io/fs"
	"os"
)

// openTries bounds how often OpenContent fetches content that an
// eviction removed again before it could be opened.
const openTries = 3

// OpenContent opens the content hash (size bytes) for reading, fetching it
// first when this host lacks it (EnsureContent). With a content store the
// host's content is a cache that an eviction may empty between the fetch
// and the open; a file once open stays readable whatever is removed
// after, so content gone meanwhile is fetched and opened again. Content
// that is not there and cannot be fetched answers an error wrapping
// fs.ErrNotExist.
func (b *Store) OpenContent(ctx context.Context, hash string, size int64) (*os.File, error) {
	for try := 1; ; try++ {
		if err := b.EnsureContent(ctx, map[string]int64{hash: size}); err != nil {
			return nil, err
		}
		f, err := os.Open(b.ContentPath(hash))
		if err == nil || !errors.Is(err, fs.ErrNotExist) || b.Fetch == nil || try == openTries {
			return f, err
		}
	}
}
