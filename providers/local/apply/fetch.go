package apply

import (
	"context"
	"errors"
	"fmt"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// fetch brings the content of need this host lacks from the content
// store before anything changes, each piece handed to stage as it comes
// when there is one (and kept in the host's content too only with keep).
// A missing or corrupt object there marks the snapshot damaged and
// refuses the restore or fork, nothing changed.
func (b *Writer) fetch(ctx context.Context, m *store.Manifest, need map[string]int64, stage *staging, keep bool) error {
	if b.Fetch == nil {
		return nil
	}
	var sink func(hash string, data []byte) error
	if stage != nil {
		sink = stage.put
	}
	err := b.Fetch(ctx, need, sink, keep || stage == nil)
	if err == nil {
		return nil
	}
	if errors.Is(err, providers.ErrIncomplete) {
		b.MarkDamaged(m.ID, "Its content is damaged in the content store: "+err.Error())
		return &providers.RefusedError{Why: fmt.Sprintf("Snapshot %s cannot be restored: %s. Nothing was changed.", m.ID, err)}
	}
	return fmt.Errorf("snapshot %s: %w", m.ID, err)
}

// FetchAll brings every piece of m's content this host lacks into the
// host's content, each checked, before anything is written: a shared
// tree made of m on a host whose cache lacks it is then links to the one
// copy fetched (package overlay) rather than a second copy of each. A
// missing or corrupt object marks the snapshot damaged, as Apply's fetch
// does.
func (b *Writer) FetchAll(ctx context.Context, m *store.Manifest) error {
	return b.fetch(ctx, m, m.Hashes(), nil, true)
}
