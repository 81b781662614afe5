package browse

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// CheckReadable checks, before a download streams a byte, that every file
// of a snapshot under dir has its content in the store, of the size the
// manifest recorded: a content file deleted or cut short on disk is
// ErrIncomplete here, not a stream cut part way. Each content is looked at
// once (a stat, no read).
func (b *Files) CheckReadable(ctx context.Context, ref providers.SnapshotRef, dir string) error {
	m, err := b.LoadUsable(ref)
	if err != nil {
		return err
	}
	rel, err := safeRel(dir)
	if err != nil {
		return err
	}
	prefix := rel + "/"
	seen := make(map[string]bool)
	for i := range m.Entries {
		e := &m.Entries[i]
		if e.Type != store.TypeFile || seen[e.Hash] {
			continue
		}
		if rel != "." && e.Path != rel && !strings.HasPrefix(e.Path, prefix) {
			continue
		}
		if hidden(e.Path) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		f, err := b.OpenContent(ctx, e.Hash, e.Size)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("the content of %s: %w", e.Path, err)
		}
		var fi fs.FileInfo
		if err == nil {
			fi, err = f.Stat()
			_ = f.Close()
		}
		switch {
		case err != nil:
			return fmt.Errorf("the content of %s is missing on disk: %w", e.Path, providers.ErrIncomplete)
		case fi.Size() != e.Size:
			return fmt.Errorf("the content of %s is cut short or damaged on disk: %w", e.Path, providers.ErrIncomplete)
		}
		seen[e.Hash] = true
	}
	return nil
}
