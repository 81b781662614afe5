package contentledger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/boxsnap/boxsnap/app/store/db"
)

// Digest is the SHA-256 (hex) of keys sorted bytewise, each followed by a
// newline: what the ledger records of all a snapshot holds, so a take
// naming over it can check its own list of the base's keys first.
func Digest(keys []string) string {
	// The keys go through one buffer: a write a key would be two calls
	// and a copy each, at every take, for every object it names.
	h := sha256.New()
	buf := make([]byte, 0, 64<<10)
	for _, k := range keys {
		if len(buf)+len(k)+1 > cap(buf) {
			h.Write(buf)
			buf = buf[:0]
		}
		buf = append(append(buf, k...), '\n')
	}
	h.Write(buf)
	return hex.EncodeToString(h.Sum(nil))
}

// sortedSet is keys sorted bytewise, each once: keys itself when they are
// so already, as a take's are.
func sortedSet(keys []string) []string {
	set := true
	for i := 1; i < len(keys) && set; i++ {
		set = keys[i-1] < keys[i]
	}
	if set {
		return keys
	}
	out := slices.Clone(keys)
	slices.Sort(out)
	return slices.Compact(out)
}

// delta answers what a snapshot holding keys names over a base holding
// baseKeys (both sorted sets): the keys the base lacks, and the base's
// keys it lacks.
func delta(keys, baseKeys []string) (names, drops []string) {
	i, j := 0, 0
	for i < len(keys) || j < len(baseKeys) {
		switch {
		case j == len(baseKeys) || (i < len(keys) && keys[i] < baseKeys[j]):
			names = append(names, keys[i])
			i++
		case i == len(keys) || baseKeys[j] < keys[i]:
			drops = append(drops, baseKeys[j])
			j++
		default:
			i++
			j++
		}
	}
	return names, drops
}

// NameOver records that snapshot holds keys, naming only those base does
// not hold and dropping those base holds that it does not, in one
// transaction that keeps base from being deleted until it commits.
// baseKeys is every key base holds, as the take knows it. It answers
// false, recording nothing, when base is no longer in the ledger (deleted
// while the take shipped) or holds other keys than baseKeys: the take
// then claims all it holds and names them with Name. Like Name, it fails
// when a sweep freed one of the keys it names.
func (l *Ledger) NameOver(ctx context.Context, snapshot, base string, keys, baseKeys []string) (bool, error) {
	return l.name(ctx, snapshot, base, keys, baseKeys)
}

func (l *Ledger) name(ctx context.Context, snapshot, base string, keys, baseKeys []string) (bool, error) {
	keys = sortedSet(keys)
	if err := l.step(l.hooks.naming, "base"); err != nil {
		return false, err
	}
	tx, err := l.pool.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("name snapshot %s's objects: %w", snapshot, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	names, drops, over := keys, []string(nil), (*string)(nil)
	if base != "" {
		held, err := l.q.ContentBaseHeld(ctx, tx, base)
		if errors.Is(err, pgx.ErrNoRows) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("name snapshot %s's objects: %w", snapshot, err)
		}
		baseKeys = sortedSet(baseKeys)
		if held.Held != int64(len(baseKeys)) || held.Digest != Digest(baseKeys) {
			return false, nil
		}
		names, drops = delta(keys, baseKeys)
		over = &base
	}
	added, err := l.q.ContentSnapshotAdd(ctx, tx, db.ContentSnapshotAddParams{SnapshotID: snapshot, BaseID: over, Held: int64(len(keys)), Digest: Digest(keys)})
	if err != nil {
		return false, fmt.Errorf("name snapshot %s's objects: %w", snapshot, err)
	}
	if added == 0 {
		return true, nil // named already, by this take before it was resumed
	}
	err = l.step(l.hooks.naming, "names")
	if err == nil {
		err = inBatches(names, func(part []string) error {
			return l.q.ContentName(ctx, tx, db.ContentNameParams{SnapshotID: snapshot, Keys: part})
		})
	}
	if err == nil {
		err = l.step(l.hooks.naming, "drops")
	}
	if err == nil {
		err = inBatches(drops, func(part []string) error {
			return l.q.ContentDrop(ctx, tx, db.ContentDropParams{SnapshotID: snapshot, Keys: part})
		})
	}
	if err == nil {
		err = l.step(l.hooks.naming, "commit")
	}
	if err == nil {
		err = tx.Commit(ctx)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23503" {
		return false, fmt.Errorf(freedMeanwhileWords, snapshot)
	}
	if err != nil {
		return false, fmt.Errorf("name snapshot %s's objects: %w", snapshot, err)
	}
	return true, nil
}

// step runs a test's hook before the step of a naming or a hand-down.
func (l *Ledger) step(hook func(string) error, name string) error {
	if hook == nil {
		return nil
	}
	return hook(name)
}

// handDown forgets snapshot, handing what it names and drops down to the
// snapshots taken over it, in one transaction: each child then names what
// it held through snapshot and snapshot's base does not hold, and drops
// what that base holds and the child does not, so what each child holds
// in full is unchanged and stays named at every commit.
func (l *Ledger) handDown(ctx context.Context, snapshot string) error {
	tx, err := l.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	base, err := l.q.ContentHandDownLock(ctx, tx, snapshot)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // forgotten already
	}
	if err != nil {
		return err
	}
	// The order matters: each step reads what the ones before left.
	steps := []struct {
		name string
		run  func(context.Context, db.DBTX, string) error
	}{
		{"drops down", l.q.ContentHandDropsDown},
		{"names dropped", l.q.ContentUnnameDropped},
		{"names down", l.q.ContentHandNamesDown},
		{"drops named", l.q.ContentUndropNamed},
		{"rebase", func(ctx context.Context, tx db.DBTX, id string) error {
			return l.q.ContentRebase(ctx, tx, db.ContentRebaseParams{NewBase: base, SnapshotID: id})
		}},
		{"unname", l.q.ContentUnname},
		{"forget drops", l.q.ContentForgetDrops},
		{"forget", l.q.ContentForgetSnapshot},
	}
	for _, s := range steps {
		if err := l.step(l.hooks.handDown, s.name); err != nil {
			return err
		}
		if err := s.run(ctx, tx, snapshot); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	if err := l.step(l.hooks.handDown, "commit"); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// holds answers every key snapshot holds in full: its bases' names, less
// what each snapshot below them drops, read in one snapshot of the
// database.
func (l *Ledger) holds(ctx context.Context, snapshot string) ([]string, error) {
	tx, err := l.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	var chain []string
	for id := snapshot; ; {
		row, err := l.q.ContentSnapshotOf(ctx, tx, id)
		if errors.Is(err, pgx.ErrNoRows) && id == snapshot {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		chain = append(chain, id)
		if row.BaseID == nil {
			break
		}
		id = *row.BaseID
	}
	held := map[string]bool{}
	for i := len(chain) - 1; i >= 0; i-- {
		drops, err := l.q.ContentDropsOf(ctx, tx, chain[i])
		if err != nil {
			return nil, err
		}
		for _, k := range drops {
			delete(held, k)
		}
		names, err := l.q.ContentNamedBy(ctx, tx, chain[i])
		if err != nil {
			return nil, err
		}
		for _, k := range names {
			held[k] = true
		}
	}
	out := make([]string, 0, len(held))
	for k := range held {
		out = append(out, k)
	}
	slices.Sort(out)
	return out, nil
}
