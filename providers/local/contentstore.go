package local

import (
	"context"
	"fmt"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/ship"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// useContentStore gives the backend its shipper and, with a content store
// (Config.ContentStore), hands the parts that read content its fetch: a
// restore's or fork's writes, a browse's reads, the held list (a shipped
// snapshot's content may have left this host), and deletes its unnaming.
// The cache's bound is set here, once: Config's, or by default a share of
// the file system holding the content (DefaultCachePercent).
func useContentStore(b *Backend, cfg Config) error {
	b.shipper = &ship.Shipper{Store: b.Store, Remote: cfg.ContentStore, Log: b.log, Workers: b.workers,
		NoteChecked: b.Copier.NoteChecked}
	b.Shipping = &Shipping{st: b.Store, shipper: b.shipper, log: b.log}
	if cfg.ContentStore == nil {
		return nil
	}
	u, err := cacheBound(b.Path(store.DirContent), cfg.ContentCacheBytes, cfg.ContentCachePercent)
	if err != nil {
		return fmt.Errorf("local backend: the content cache's bound: %w", err)
	}
	b.shipper.CacheBytes, b.Shipping.cache = u.Bound, u
	b.Sharing.Bucket = true
	b.Store.Fetch = b.shipper.Fetch
	b.Store.FetchSnapshot = gatedFetch(cfg.MayFetch, b.shipper.FetchSnapshot)
	b.Writer.Fetch = b.shipper.FetchTo
	b.Held.Shipped = b.shipper.Shipped
	b.Capturer.Unshipped = true
	b.Deletes.Unname = b.shipper.Unname
	return nil
}

// gatedFetch is fetch asked first of may (Config.MayFetch), when set.
func gatedFetch(may, fetch func(context.Context, string) error) func(context.Context, string) error {
	if may == nil {
		return fetch
	}
	return func(ctx context.Context, id string) error {
		if err := may(ctx, id); err != nil {
			return err
		}
		return fetch(ctx, id)
	}
}

// loadWhole is what an export or a scrub loads a snapshot with: its
// manifest, and with a content store every piece of its content fetched
// first, since each reads every file.
func loadWhole(st *store.Store, stored bool) func(providers.SnapshotRef) (*store.Manifest, error) {
	if !stored {
		return st.LoadUsable
	}
	return func(ref providers.SnapshotRef) (*store.Manifest, error) {
		m, err := st.LoadUsable(ref)
		if err == nil {
			// Its caller holds no context to pass.
			err = st.EnsureContent(context.Background(), m.Hashes())
		}
		return m, err
	}
}
