package store

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	boxsql "github.com/boxsnap/boxsnap/sql"
)

// Store runs boxsnap's named queries (sql/queries) on a pool.
type Store struct {
	Pool    *pgxpool.Pool
	queries map[string]string
}

// New loads the named queries and checks that every name in need exists, so
// a missing query fails the start, not a request.
func New(pool *pgxpool.Pool, need ...string) (*Store, error) {
	q, err := boxsql.Queries()
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, n := range need {
		if _, ok := q[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("sql queries missing: %v", missing)
	}
	return &Store{Pool: pool, queries: q}, nil
}

// Q returns the text of the named query. Callers name their queries in New's
// need list, so a missing one has already failed the start.
func (s *Store) Q(name string) string {
	q, ok := s.queries[name]
	if !ok {
		panic("store: unknown query " + name + " (add it to the need list)")
	}
	return q
}

// DB is what a query runs on: the pool or a transaction.
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// InTx runs fn in a transaction, committing when it returns nil. It is the
// helper that inserts a River job in the same transaction as the rows it
// belongs to: fn calls the client's InsertTx with tx.
func InTx(ctx context.Context, pool *pgxpool.Pool, fn func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, pool, fn)
}

// NotFound translates pgx's no-rows into ErrNotFound, wrapping what.
func NotFound(err error, what string) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
