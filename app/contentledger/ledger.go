package contentledger

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/store/db"
)

// DefaultGrace is how long a take's claim keeps its objects from the
// sweep: far longer than any take ships for.
const DefaultGrace = 6 * time.Hour

// batch bounds the keys one statement carries.
const batch = 5000

// Ledger is the content store's record in PostgreSQL.
type Ledger struct {
	pool *pgxpool.Pool
	q    *db.Queries
	// Grace is how long a claim lasts; DefaultGrace when 0.
	Grace time.Duration
	// hooks lets this package's tests stop a sweep part way.
	hooks hooks
}

type hooks struct {
	// deleted runs in a sweep after it deleted a batch's objects in the
	// bucket, before it commits; an error stops the sweep there.
	deleted func() error
	// naming and handDown run before each step of a naming or a
	// hand-down, in its transaction; an error stops it there.
	naming, handDown func(step string) error
	// deletedPacks runs likewise after a batch of packs was deleted.
	deletedPacks func() error
	// repacking runs at each step of a repack (claimed, put, moved,
	// committed); an error stops it there, as a kill would.
	repacking func(step string) error
}

// New is the ledger on pool.
func New(pool *pgxpool.Pool) *Ledger {
	return &Ledger{pool: pool, q: db.New()}
}

func (l *Ledger) grace() time.Duration {
	if l.Grace > 0 {
		return l.Grace
	}
	return DefaultGrace
}

// inBatches calls fn on keys a batch at a time.
func inBatches(keys []string, fn func([]string) error) error {
	for len(keys) > 0 {
		n := min(len(keys), batch)
		if err := fn(keys[:n]); err != nil {
			return err
		}
		keys = keys[n:]
	}
	return nil
}

// Claim claims keys for a take about to ship them and answers those
// stored in the bucket.
func (l *Ledger) Claim(ctx context.Context, keys []string) (map[string]bool, error) {
	stored := make(map[string]bool, len(keys))
	err := inBatches(keys, func(part []string) error {
		rows, err := l.q.ContentClaim(ctx, l.pool, db.ContentClaimParams{GraceSeconds: l.grace().Seconds(), Keys: part})
		for _, r := range rows {
			if r.Stored {
				stored[r.Key] = true
			}
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim the content store's objects: %w", err)
	}
	return stored, nil
}

// Stored records that keys are in the bucket.
func (l *Ledger) Stored(ctx context.Context, keys []string) error {
	return inBatches(keys, func(part []string) error {
		if err := l.q.ContentStored(ctx, l.pool, part); err != nil {
			return fmt.Errorf("record the content store's objects: %w", err)
		}
		return nil
	})
}

// Name records that snapshot names keys, all it holds, in one
// transaction. It fails when a sweep freed one of them (its claim ran
// out): the take then ships again.
func (l *Ledger) Name(ctx context.Context, snapshot string, keys []string) error {
	_, err := l.name(ctx, snapshot, "", keys, nil)
	return err
}

// Unname records that snapshot names nothing any more, handing what the
// snapshots taken over it still hold down to them.
func (l *Ledger) Unname(ctx context.Context, snapshot string) error {
	if err := l.handDown(ctx, snapshot); err != nil {
		return fmt.Errorf("forget what snapshot %s names in the content store: %w", snapshot, err)
	}
	return nil
}

// NamedBy lists every key snapshot holds: those it names and those it
// holds through its bases.
func (l *Ledger) NamedBy(ctx context.Context, snapshot string) ([]string, error) {
	return l.holds(ctx, snapshot)
}

// Counts answers how many objects the ledger records and how many of
// them nothing names.
func (l *Ledger) Counts(ctx context.Context) (objects, unnamed int64, err error) {
	r, err := l.q.ContentCounts(ctx, l.pool)
	return r.Objects, r.Unnamed, err
}
