package snapshots

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/store/db"
)

// Planned runs each query on d as an unnamed statement, planned for its
// arguments: a list's filter that is off folds away, and the plan reads the
// indexes of those that are on (a cached generic plan could not).
func Planned(d db.DBTX) db.DBTX { return planned{d} }

type planned struct{ db.DBTX }

func (p planned) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return p.DBTX.Query(ctx, sql, append([]any{pgx.QueryExecModeDescribeExec}, args...)...)
}

func (p planned) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return p.DBTX.QueryRow(ctx, sql, append([]any{pgx.QueryExecModeDescribeExec}, args...)...)
}
