package contentledger

import (
	"context"
	"errors"
	"fmt"
)

// Deleter deletes an object from the bucket; one that is not there is no
// error.
type Deleter interface {
	Delete(ctx context.Context, key string) error
}

// sweepBatch is how many objects one transaction of a sweep frees.
const sweepBatch = 200

// Sweep deletes from the bucket every object no snapshot names and no
// take claims: first it records them not stored, then, a batch a
// transaction, the rows are locked, forgotten, the objects deleted in the
// bucket, and the transaction commits. It is
// safe on any process, several at once (SKIP LOCKED), and after any kill
// (a rolled-back batch is deleted again by the next sweep). It answers how
// many objects it freed, packs counted one each. An object in a pack is
// forgotten with no request; the pack goes once nothing stored or claimed
// lies in it (sweepPacks). When bucket is also a Repacker, the packs
// mostly freed have their live objects moved to new packs first (repack),
// and go after the grace.
func (l *Ledger) Sweep(ctx context.Context, bucket Deleter) (int, error) {
	// First no object to free is recorded stored any more (committed), so
	// a take claiming one later puts it again whatever the bucket holds.
	for {
		keys, err := l.q.ContentUnstore(ctx, l.pool, sweepBatch)
		if err != nil {
			return 0, fmt.Errorf("sweep the content store: %w", err)
		}
		if len(keys) == 0 {
			break
		}
	}
	freed := 0
	for {
		n, err := l.sweepBatch(ctx, bucket)
		freed += n
		if err != nil {
			return freed, err
		}
		if n == 0 {
			break
		}
	}
	// A repack that failed leaves its packs as they were: the packs
	// nothing lies in are deleted all the same.
	var repackErr error
	if r, ok := bucket.(Repacker); ok {
		_, repackErr = l.repack(ctx, r)
	}
	packs, err := l.sweepPacks(ctx, bucket)
	return freed + packs, errors.Join(repackErr, err)
}

func (l *Ledger) sweepBatch(ctx context.Context, bucket Deleter) (int, error) {
	tx, err := l.pool.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("sweep the content store: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	keys, err := l.q.ContentUnnamed(ctx, tx, sweepBatch)
	if err != nil || len(keys) == 0 {
		return 0, err
	}
	singles, err := l.singles(ctx, tx, keys)
	if err != nil {
		return 0, err
	}
	if err := l.q.ContentForget(ctx, tx, keys); err != nil {
		return 0, fmt.Errorf("sweep the content store: %w", err)
	}
	for _, k := range singles {
		if err := bucket.Delete(ctx, k); err != nil {
			return 0, fmt.Errorf("sweep the content store: %w", err)
		}
	}
	if l.hooks.deleted != nil {
		if err := l.hooks.deleted(); err != nil {
			return 0, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("sweep the content store: %w", err)
	}
	return len(keys), nil
}
