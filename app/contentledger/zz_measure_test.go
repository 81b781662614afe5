package contentledger

import (
	"fmt"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/dbtest"
)

func TestZZMeasure(t *testing.T) {
	pool := dbtest.New(t)
	l := New(pool)
	ctx := t.Context()
	const n = 45000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("pre/c/%02x/%064x", i%256, i*7919)
	}
	all := append(append([]string{}, keys...), func() []string {
		out := make([]string, 20*450)
		for i := range out {
			out[i] = fmt.Sprintf("pre/c/%02x/%064x", i%256, (n+i)*7919)
		}
		return out
	}()...)
	if _, err := l.Claim(ctx, all); err != nil {
		t.Fatal(err)
	}
	if err := l.Stored(ctx, all); err != nil {
		t.Fatal(err)
	}
	prev := ""
	cur := append([]string{}, keys...)
	for i := range 6 {
		id := fmt.Sprintf("snfull%08d", i)
		t0 := time.Now()
		if err := l.Name(ctx, id, cur); err != nil {
			t.Fatal(err)
		}
		t.Logf("full naming %d keys: %v", len(cur), time.Since(t0))
		_ = prev
	}
	// deltas: 1% churn each take
	base := "snfull00000000"
	baseKeys := append([]string{}, keys...)
	for i := range 6 {
		next := append([]string{}, baseKeys...)
		for j := range 450 {
			next[(i*450+j*97)%n] = all[n+i*450+j]
		}
		id := fmt.Sprintf("sndelta%08d", i)
		t0 := time.Now()
		ok, err := l.NameOver(ctx, id, base, next, baseKeys)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		t.Logf("delta naming over base, 1%% churn: %v", time.Since(t0))
		base, baseKeys = id, next
	}
	// GIN array
	if _, err := pool.Exec(ctx, `CREATE TABLE sets (snapshot_id text PRIMARY KEY, keys text[] NOT NULL); CREATE INDEX sets_keys ON sets USING gin (keys)`); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		t0 := time.Now()
		if _, err := pool.Exec(ctx, `INSERT INTO sets VALUES ($1, $2)`, fmt.Sprintf("s%d", i), keys); err != nil {
			t.Fatal(err)
		}
		t.Logf("GIN array insert of %d keys: %v", n, time.Since(t0))
	}
	for _, q := range []string{
		`SELECT count(*) FROM (SELECT o.key FROM content_objects o WHERE NOT EXISTS (SELECT 1 FROM sets s WHERE s.keys @> ARRAY[o.key]) LIMIT 200) x`,
		`SELECT count(*) FROM (SELECT o.key FROM content_objects o WHERE NOT EXISTS (SELECT 1 FROM content_names s WHERE s.key = o.key) LIMIT 200) x`,
	} {
		t0 := time.Now()
		var c int
		if err := pool.QueryRow(ctx, q).Scan(&c); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d in %v", q[:80], c, time.Since(t0))
	}
	var size string
	_ = pool.QueryRow(ctx, `SELECT pg_size_pretty(pg_total_relation_size('sets'))`).Scan(&size)
	t.Logf("sets size (6 snapshots): %s", size)
	_ = pool.QueryRow(ctx, `SELECT pg_size_pretty(pg_total_relation_size('content_names')+pg_total_relation_size('content_drops'))`).Scan(&size)
	t.Logf("names+drops size (6 full, 6 delta): %s", size)
	t0 := time.Now()
	if err := l.Unname(ctx, "snfull00000000"); err != nil {
		t.Fatal(err)
	}
	t.Logf("hand down of a 45k-key root to its child: %v", time.Since(t0))
}
