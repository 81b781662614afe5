package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

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
}

// unshippedSnapshot is one snapshot this host holds whole that is not in
// the content store yet, and when it was taken.
type unshippedSnapshot struct {
	id    string
	taken time.Time
}

// unshipped lists the snapshots this host holds whole (not damaged, not
// being deleted) that are not in the content store yet, oldest first; none
// without a content store.
func (b *Shipping) unshipped(ctx context.Context) ([]unshippedSnapshot, error) {
	if b.shipper == nil || b.shipper.Remote == nil {
		return nil, nil
	}
	return unshippedIn(ctx, b.st)
}

// CountUnshipped counts the snapshots the local backend's folder root
// holds whole that are not in a content store: for boxsnap doctor, which
// reads the folder without opening the backend.
func CountUnshipped(ctx context.Context, root string) (int, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return 0, err
	}
	u, err := unshippedIn(ctx, store.NewStore(abs))
	return len(u), err
}

// unshippedIn lists the snapshots st holds whole that are not marked
// shipped, oldest first.
func unshippedIn(ctx context.Context, st *store.Store) ([]unshippedSnapshot, error) {
	dirs, err := os.ReadDir(st.Path(store.DirSnapshots))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list the snapshots to ship: %w", err)
	}
	var out []unshippedSnapshot
	for _, d := range dirs {
		id := d.Name()
		if strings.HasPrefix(id, ".") || !d.IsDir() || !st.WholeSnapshot(id) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if _, err := os.Stat(filepath.Join(st.SnapDir(id), ship.FileShipped)); err == nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(st.SnapDir(id), store.FileDamaged)); err == nil {
			continue
		}
		u := unshippedSnapshot{id: id}
		var lab store.Label
		if store.ReadChecked(filepath.Join(st.SnapDir(id), store.FileLabel), &lab) == nil {
			u.taken = lab.TakenAt
		}
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].taken.Equal(out[j].taken) {
			return out[i].taken.Before(out[j].taken)
		}
		return out[i].id < out[j].id
	})
	return out, nil
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
		if err := b.shipOne(ctx, u.id); err != nil {
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
	if _, err := os.Stat(b.st.SnapDir(id)); err == nil {
		return false, nil
	}
	err := b.st.FetchSnapshot(ctx, id)
	if errors.Is(err, providers.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}
