package contentledger

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/boxsnap/boxsnap/app/store/db"
)

// Repacker is a bucket that also rewrites packs: ship's Repacker answers
// it. When the sweep's bucket is one, the sweep repacks the packs mostly
// freed, so the bucket's room their freed objects held comes back (as
// restic's prune does).
type Repacker interface {
	Deleter
	// NewPackKey is the key of a pack not yet in the bucket.
	NewPackKey() string
	// Repack reads each object keys[i] (lens[i] bytes at offs[i] in pack
	// packs[i]), checks it by its hash, and puts them all in a new pack
	// under key; it answers the new pack's size and each object's offset
	// in it.
	Repack(ctx context.Context, key string, keys, packs []string, offs, lens []int64) (size int64, at []int64, err error)
}

// Bounds on a pack's index, in bytes: a line per object and the trailer.
// The ledger counts them as live, so a pack a repack made (its objects
// and their index alone) is never found mostly freed.
const (
	repackIndexLine = 64 + 1 + 20 + 1 + 20 + 1
	repackIndexTail = 64
)

// repackTarget bounds the live bytes one new pack gathers from the
// mostly freed packs: a take's pack size.
const repackTarget = 16 << 20

// repackScan is how many mostly freed packs one round of a repack looks at.
const repackScan = 100

// repack rewrites every pack whose stored objects hold less than half its
// bytes: their objects, read back and checked by their hashes, are put in
// a new pack (claimed first, so a kill before the move leaves a pack the
// sweep deletes once its claim ran out), then moved there in one
// transaction that also keeps the old packs for the ledger's grace (a
// fetch on any host may have located an object in one just before; a
// fetch never takes that long), after which the sweep deletes them as it
// deletes any pack nothing lies in. One repack runs at a time, on any
// process (a session's advisory lock, gone with a killed process). It
// answers how many packs it emptied.
func (l *Ledger) repack(ctx context.Context, r Repacker) (int, error) {
	conn, err := l.pool.Acquire(ctx)
	if err != nil {
		return 0, fmt.Errorf("repack the content store's packs: %w", err)
	}
	defer conn.Release()
	got, err := l.q.ContentRepackLock(ctx, conn)
	if err != nil {
		return 0, fmt.Errorf("repack the content store's packs: %w", err)
	}
	if !got {
		return 0, nil
	}
	defer func() {
		if err := l.q.ContentRepackUnlock(context.WithoutCancel(ctx), conn); err != nil {
			// The session would keep the lock: it must not go back to the pool.
			_ = conn.Hijack().Close(context.WithoutCancel(ctx))
		}
	}()
	emptied := 0
	// A group that failed (an object that does not match its hash, a
	// bucket that refused) is tried again a pack at a time, and a pack
	// that fails alone is left as it is while the others go on.
	failed, alone := map[string]bool{}, map[string]bool{}
	var errs []error
	for {
		sparse, err := l.q.ContentPacksSparse(ctx, conn, db.ContentPacksSparseParams{
			IndexLine: repackIndexLine, IndexTail: repackIndexTail, MaxKeys: repackScan})
		if err != nil {
			return emptied, errors.Join(append(errs, fmt.Errorf("repack the content store's packs: %w", err))...)
		}
		sparse = slices.DeleteFunc(sparse, func(p db.ContentPacksSparseRow) bool { return failed[p.Key] })
		if len(sparse) == 0 || ctx.Err() != nil {
			return emptied, errors.Join(append(errs, ctx.Err())...)
		}
		for len(sparse) > 0 {
			group, live := []string{sparse[0].Key}, sparse[0].Live
			sparse = sparse[1:]
			for !alone[group[0]] && len(sparse) > 0 && !alone[sparse[0].Key] && live+sparse[0].Live <= repackTarget {
				group, live, sparse = append(group, sparse[0].Key), live+sparse[0].Live, sparse[1:]
			}
			read, err := l.repackGroup(ctx, r, group)
			switch {
			case err == nil:
				emptied += len(group)
			case read && len(group) > 1:
				for _, k := range group {
					alone[k] = true
				}
			case read:
				errs = append(errs, err)
				failed[group[0]] = true
			default:
				return emptied, errors.Join(append(errs, err)...)
			}
		}
	}
}

// repackGroup moves the stored objects of the packs old into one new
// pack, and keeps the old packs for the grace. It answers whether it
// failed reading or putting the objects (read), which a pack at a time
// may not.
func (l *Ledger) repackGroup(ctx context.Context, r Repacker, old []string) (read bool, err error) {
	rows, err := l.q.ContentPacksLive(ctx, l.pool, old)
	if err != nil {
		return false, fmt.Errorf("repack the content store's packs: %w", err)
	}
	keys, packs := make([]string, len(rows)), make([]string, len(rows))
	offs, lens := make([]int64, len(rows)), make([]int64, len(rows))
	for i, o := range rows {
		keys[i], packs[i], offs[i], lens[i] = o.Key, o.Pack, o.PackOffset, o.PackLength
	}
	key := r.NewPackKey()
	if err := l.ClaimPack(ctx, key, 0); err != nil {
		return false, err
	}
	if err := l.repackStep(ctx, "claimed"); err != nil {
		return false, err
	}
	size, at, err := r.Repack(ctx, key, keys, packs, offs, lens)
	if err != nil {
		return true, fmt.Errorf("repack the content store's packs %s: %w", strings.Join(old, ", "), err)
	}
	if err := l.repackStep(ctx, "put"); err != nil {
		return false, err
	}
	if err := l.moveTo(ctx, key, size, old, keys, packs, at, lens); err != nil {
		return false, l.dropForgotten(ctx, r, key, err)
	}
	return false, nil
}

// moveTo records, in one transaction, that the objects keys now lie in
// pack key at offsets at, that pack key is stored with size bytes, and
// that the packs old are kept for the grace and then go.
func (l *Ledger) moveTo(ctx context.Context, key string, size int64, old, keys, packs []string, at, lens []int64) error {
	tx, err := l.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("record the repacked pack %s: %w", key, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := l.q.ContentPacksLockForRepack(ctx, tx, old); err != nil {
		return fmt.Errorf("record the repacked pack %s: %w", key, err)
	}
	if _, err := l.q.ContentPackMove(ctx, tx, db.ContentPackMoveParams{NewPack: key, Keys: keys, OldPacks: packs, Offsets: at, Lengths: lens}); err != nil {
		return fmt.Errorf("record the repacked pack %s: %w", key, err)
	}
	if err := l.q.ContentPackRepacked(ctx, tx, db.ContentPackRepackedParams{Key: key, Size: size}); err != nil {
		return fmt.Errorf("record the repacked pack %s: %w", key, err)
	}
	if err := l.q.ContentPacksRetire(ctx, tx, db.ContentPacksRetireParams{Packs: old, GraceSeconds: l.grace().Seconds()}); err != nil {
		return fmt.Errorf("record the repacked pack %s: %w", key, err)
	}
	if err := l.repackStep(ctx, "moved"); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("record the repacked pack %s: %w", key, err)
	}
	return l.repackStep(ctx, "committed")
}

// repackStep runs the tests' hook at a step of a repack.
func (l *Ledger) repackStep(_ context.Context, step string) error {
	if l.hooks.repacking != nil {
		return l.hooks.repacking(step)
	}
	return nil
}

// EachPack calls fn for every stored pack with its size and the stored
// objects the ledger says lie in it: where, and how long. The doctor
// checks them against each pack's own index.
func (l *Ledger) EachPack(ctx context.Context, fn func(pack string, size int64, keys []string, offs, lens []int64) error) error {
	rows, err := l.q.ContentPackRecords(ctx, l.pool)
	if err != nil {
		return fmt.Errorf("list the content store's packs: %w", err)
	}
	for i := 0; i < len(rows); {
		p := rows[i]
		var keys []string
		var offs, lens []int64
		for ; i < len(rows) && rows[i].Pack == p.Pack; i++ {
			if rows[i].Key != "" {
				keys, offs, lens = append(keys, rows[i].Key), append(offs, rows[i].PackOffset), append(lens, rows[i].PackLength)
			}
		}
		if err := fn(p.Pack, p.Size, keys, offs, lens); err != nil {
			return err
		}
	}
	return nil
}
