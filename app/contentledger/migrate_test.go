package contentledger

import (
	"io/fs"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/objstore/s3test"
	boxsql "github.com/boxsnap/boxsnap/sql"
)

// migrations is the app's migrations on pool, to move a database before
// and after bases were recorded.
func migrations(t *testing.T, pool *pgxpool.Pool) *goose.Provider {
	sub, err := fs.Sub(boxsql.Migrations, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	sqlDB := stdlib.OpenDBFromPool(pool)
	t.Cleanup(func() { _ = sqlDB.Close() })
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, sub,
		goose.WithTableName("boxsnap_migrations"), goose.WithAllowOutofOrder(true))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestExistingLedgersMigrate: a ledger from before bases were recorded
// migrates with each snapshot holding what it named, and over no base; a
// snapshot deleted then frees only what nothing else names, and a ledger
// migrated back names in full what each snapshot held over its bases.
func TestExistingLedgersMigrate(t *testing.T) {
	ctx := t.Context()
	pool := dbtest.New(t)
	p := migrations(t, pool)
	if _, err := p.DownTo(ctx, 280); err != nil {
		t.Fatal(err)
	}
	legacy := map[string][]string{
		"snaaaaaaaaaaaa": {"c/ab", "c/a_c", "c/shared", "manifests/snaaaaaaaaaaaa"},
		"snbbbbbbbbbbbb": {"c/shared", "c/b", "manifests/snbbbbbbbbbbbb"},
	}
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(`INSERT INTO content_objects (key, stored) VALUES ('c/ab', true), ('c/a_c', true), ('c/shared', true), ('c/b', true),
		('manifests/snaaaaaaaaaaaa', true), ('manifests/snbbbbbbbbbbbb', true), ('c/new', true)`)
	for id, ks := range legacy {
		exec(`INSERT INTO content_names (snapshot_id, key) SELECT $1, unnest($2::text[])`, id, ks)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("a ledger of today migrating: %v", err)
	}
	f := &fixture{t: t, ctx: ctx, ledger: New(pool)}
	for id, ks := range legacy {
		got := keys(f.named(id))
		if want := sortedSet(ks); !slices.Equal(got, want) {
			t.Fatalf("after the migration snapshot %s holds %v; it named %v", id, got, want)
		}
	}

	// A snapshot taken over a migrated one, then the ledger migrated back.
	if ok, err := f.ledger.NameOver(ctx, "sncccccccccccc", "snbbbbbbbbbbbb", []string{"c/shared", "c/new"}, legacy["snbbbbbbbbbbbb"]); err != nil || !ok {
		t.Fatalf("naming over a migrated snapshot: %v, %v", ok, err)
	}
	if n, d := f.rows("sncccccccccccc"); n != 1 || d != 2 {
		t.Fatalf("a snapshot over a migrated one names %d keys and drops %d; want 1 and 2", n, d)
	}
	if _, err := p.DownTo(ctx, 280); err != nil {
		t.Fatalf("the ledger migrating back: %v", err)
	}
	var full []string
	rows, err := pool.Query(ctx, `SELECT key FROM content_names WHERE snapshot_id = 'sncccccccccccc' ORDER BY key COLLATE "C"`)
	if err == nil {
		full, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil || !slices.Equal(full, []string{"c/new", "c/shared"}) {
		t.Fatalf("migrated back, the snapshot over a base names %v (%v); want what it held", full, err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}

	// Deleting the first frees what it alone named, and only that.
	srv := s3test.Start(t)
	cfg := srv.Bucket(t)
	bucket, err := objstore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.ledger.Unname(ctx, "snaaaaaaaaaaaa"); err != nil {
		t.Fatal(err)
	}
	if freed, err := f.ledger.Sweep(ctx, bucket); err != nil || freed != 3 {
		t.Fatalf("a sweep after the migrated snapshot was deleted freed %d (%v); want its 3 objects no other names", freed, err)
	}
	for _, id := range []string{"snbbbbbbbbbbbb", "sncccccccccccc"} {
		f.named(id)
	}
}
