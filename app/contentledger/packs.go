package contentledger

import (
	"context"
	"fmt"

	"github.com/boxsnap/boxsnap/app/store/db"
)

// ClaimPack records a pack a take is about to put, claimed for the
// ledger's grace: a sweep leaves it alone meanwhile, and deletes it once
// the claim ran out with nothing stored in it (a take killed during its
// put), so no pack is ever in the bucket that the ledger does not record.
func (l *Ledger) ClaimPack(ctx context.Context, pack string, size int64) error {
	err := l.q.ContentPackClaim(ctx, l.pool, db.ContentPackClaimParams{Key: pack, Size: size, GraceSeconds: l.grace().Seconds()})
	if err != nil {
		return fmt.Errorf("claim pack %s in the content store: %w", pack, err)
	}
	return nil
}

// StoredPack records, in one transaction, that pack is in the bucket and
// that the objects keys lie in it at offsets, lengths long: they are
// stored.
func (l *Ledger) StoredPack(ctx context.Context, pack string, keys []string, offsets, lengths []int64) error {
	tx, err := l.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("record pack %s: %w", pack, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := l.q.ContentPackStored(ctx, tx, pack); err != nil {
		return fmt.Errorf("record pack %s: %w", pack, err)
	}
	for len(keys) > 0 {
		n := min(len(keys), batch)
		err := l.q.ContentPackPlace(ctx, tx, db.ContentPackPlaceParams{Pack: pack, Keys: keys[:n], Offsets: offsets[:n], Lengths: lengths[:n]})
		if err != nil {
			return fmt.Errorf("record pack %s: %w", pack, err)
		}
		keys, offsets, lengths = keys[n:], offsets[n:], lengths[n:]
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("record pack %s: %w", pack, err)
	}
	return nil
}

// Locate calls found for each of keys that lies in a stored pack: the
// pack, where in it and how long, and the pack's size. The others are
// objects of their own.
func (l *Ledger) Locate(ctx context.Context, keys []string, found func(key, pack string, off, n, packSize int64)) error {
	return inBatches(keys, func(part []string) error {
		rows, err := l.q.ContentPackLocate(ctx, l.pool, part)
		if err != nil {
			return fmt.Errorf("locate the content store's objects: %w", err)
		}
		for _, r := range rows {
			found(r.Key, r.Pack, r.PackOffset, r.PackLength, r.PackSize)
		}
		return nil
	})
}

// PackWaste answers how many packs are stored, their bytes, and how many
// of those bytes objects still stored hold; the rest is freed objects'
// bytes kept in packs that also hold live ones (until a repack), and the
// packs' indexes.
func (l *Ledger) PackWaste(ctx context.Context) (packs, bytes, held int64, err error) {
	r, err := l.q.ContentPackWaste(ctx, l.pool)
	return r.Packs, r.Bytes, r.HeldBytes, err
}

// singles is, of keys, those that are objects of their own in the bucket:
// the others lie in packs, deleted whole when nothing lies in them.
func (l *Ledger) singles(ctx context.Context, tx db.DBTX, keys []string) ([]string, error) {
	out, err := l.q.ContentUnpacked(ctx, tx, keys)
	if err != nil {
		return nil, fmt.Errorf("sweep the content store: %w", err)
	}
	return out, nil
}

// sweepPacks deletes from the bucket every pack no stored or claimed
// object lies in and no take claims, a batch a transaction: the rows are
// locked, forgotten, the packs deleted in the bucket, and it commits; a
// kill rolls back and the next sweep deletes again. It answers how many
// packs it freed.
func (l *Ledger) sweepPacks(ctx context.Context, bucket Deleter) (int, error) {
	freed := 0
	for {
		n, err := l.sweepPackBatch(ctx, bucket)
		freed += n
		if err != nil || n == 0 {
			return freed, err
		}
	}
}

func (l *Ledger) sweepPackBatch(ctx context.Context, bucket Deleter) (int, error) {
	tx, err := l.pool.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("sweep the content store's packs: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	packs, err := l.q.ContentPacksFree(ctx, tx, sweepBatch)
	if err != nil || len(packs) == 0 {
		return 0, err
	}
	if err := l.q.ContentPackForget(ctx, tx, packs); err != nil {
		return 0, fmt.Errorf("sweep the content store's packs: %w", err)
	}
	for _, k := range packs {
		if err := bucket.Delete(ctx, k); err != nil {
			return 0, fmt.Errorf("sweep the content store's packs: %w", err)
		}
	}
	if l.hooks.deletedPacks != nil {
		if err := l.hooks.deletedPacks(); err != nil {
			return 0, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("sweep the content store's packs: %w", err)
	}
	return len(packs), nil
}
