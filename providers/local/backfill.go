package local

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/ship"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// Snapshots taken before a content store was set are on this host alone.
// The backfill ships them, oldest first, a few at a time, each as a take
// ships its own (ship.Shipper.Ship: claimed, put, named in the ledger,
// marked shipped), so a run killed part way goes on where it stopped.

// Shipping is what the backend ships beyond its takes and reads of what
// it shipped: the backfill of snapshots from before the content store
// (providers.Backfill) and how a snapshot's box ran (providers.Carried).
type Shipping struct {
	st      *store.Store
	shipper *ship.Shipper
	log     *slog.Logger
	cache   providers.CacheUse // the content cache's bound, Held left 0
}

// unshipped lists the snapshots this host holds whole (not damaged, not
// being deleted) that are not in the content store yet, oldest first; none
// without a content store.
func (b *Shipping) unshipped(ctx context.Context) ([]string, error) {
	if b.shipper == nil || b.shipper.Remote == nil {
		return nil, nil
	}
	return b.st.Unshipped(ctx, ship.FileShipped)
}

// CountUnshipped counts the snapshots the local backend's folder root
// holds whole that are not in a content store: for boxsnap doctor, which
// reads the folder without opening the backend.
func CountUnshipped(ctx context.Context, root string) (int, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return 0, err
	}
	u, err := store.NewStore(abs).Unshipped(ctx, ship.FileShipped)
	return len(u), err
}

// UnshippedSnapshots counts the snapshots this host holds that are not in
// the content store yet (providers.Backfill); 0 without a content store.
func (b *Shipping) UnshippedSnapshots(ctx context.Context) (int, error) {
	u, err := b.unshipped(ctx)
	return len(u), err
}

// ShipUnshipped ships at most max of the snapshots this host holds that
// are not in the content store yet, oldest first (providers.Backfill), and
// answers how many it shipped and how many are left. Each ships under the
// store's shared lock, so a delete waits for it or it sees the delete's
// mark and leaves the snapshot alone; one that fails to ship is left for
// the next run, and the others go on.
func (b *Shipping) ShipUnshipped(ctx context.Context, max int) (shipped, left int, err error) {
	todo, err := b.unshipped(ctx)
	if err != nil {
		return 0, 0, err
	}
	var errs []error
	for i, u := range todo {
		if i >= max || ctx.Err() != nil {
			break
		}
		if err := b.shipOne(ctx, u); err != nil {
			errs = append(errs, err)
			continue
		}
		shipped++
	}
	return shipped, len(todo) - shipped, errors.Join(errs...)
}

// shipOne ships snapshot id under the store's shared lock, unless a delete
// marked it meanwhile.
func (b *Shipping) shipOne(ctx context.Context, id string) error {
	lock, err := b.st.LockStore(ctx, false)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	if !b.st.WholeSnapshot(id) {
		return nil
	}
	if err := b.shipper.Ship(ctx, id); err != nil {
		return err
	}
	b.log.Info("local backend: a snapshot taken before the content store was set is in it now", "snapshot", id)
	return nil
}

// InContentStore says whether snapshot ref is in the content store
// (providers.Backfill): one this host holds says so by its mark; another
// is fetched (its manifest and label, as a restore here would), so what
// the bucket holds answers, not what this host remembers.
func (b *Shipping) InContentStore(ctx context.Context, ref providers.SnapshotRef) (bool, error) {
	if b.shipper == nil || b.shipper.Remote == nil {
		return false, nil
	}
	id := store.SnapID(ref)
	if err := store.CheckID("snapshot", id); err != nil {
		return false, err
	}
	if b.shipper.Shipped(id) {
		return true, nil
	}
	if b.st.HasFile(id, "") {
		return false, nil
	}
	err := b.st.FetchSnapshot(ctx, id)
	if errors.Is(err, providers.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}
