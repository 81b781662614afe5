package contentledger

import (
	"fmt"
	"testing"

	"github.com/boxsnap/boxsnap/app/dbtest"
)

// benchKeys is a tree's worth of keys (as many as a copy of /usr/share
// ships) and room for churn, all claimed and stored in a new ledger.
func benchKeys(b *testing.B, tree, spare int) (*Ledger, []string, []string) {
	l := New(dbtest.New(b))
	all := make([]string, tree+spare)
	for i := range all {
		all[i] = fmt.Sprintf("pre/c/%02x/%064x", i%256, i*7919)
	}
	if _, err := l.Claim(b.Context(), all); err != nil {
		b.Fatal(err)
	}
	if err := l.Stored(b.Context(), all); err != nil {
		b.Fatal(err)
	}
	return l, all[:tree], all[tree:]
}

// BenchmarkNaming compares what a take's naming costs in the ledger for
// a tree of 45,000 keys after 1 % churn: every key named, or only what
// changed over the base, or one key array per snapshot with a GIN index.
// go test -run '^$' -bench Naming -benchtime 10x ./app/contentledger/
func BenchmarkNaming(b *testing.B) {
	const tree, churn = 45000, 450
	b.Run("all", func(b *testing.B) {
		l, keys, _ := benchKeys(b, tree, 0)
		b.ResetTimer()
		for i := range b.N {
			if err := l.Name(b.Context(), fmt.Sprintf("snall%09d", i), keys); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("over-base", func(b *testing.B) {
		l, keys, spare := benchKeys(b, tree, churn*(b.N+1))
		if err := l.Name(b.Context(), "snbase00000000", keys); err != nil {
			b.Fatal(err)
		}
		base, baseKeys := "snbase00000000", keys
		b.ResetTimer()
		for i := range b.N {
			next := append([]string(nil), baseKeys...)
			for j := range churn {
				next[(i*churn+j*97)%tree] = spare[i*churn+j]
			}
			id := fmt.Sprintf("snover%08d", i)
			if ok, err := l.NameOver(b.Context(), id, base, next, baseKeys); err != nil || !ok {
				b.Fatal(ok, err)
			}
			base, baseKeys = id, next
		}
	})
	b.Run("gin-array", func(b *testing.B) {
		l, keys, _ := benchKeys(b, tree, 0)
		if _, err := l.pool.Exec(b.Context(), `CREATE TABLE sets (snapshot_id text PRIMARY KEY, keys text[] NOT NULL);
			CREATE INDEX sets_keys ON sets USING gin (keys)`); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := range b.N {
			if _, err := l.pool.Exec(b.Context(), `INSERT INTO sets VALUES ($1, $2)`, fmt.Sprintf("s%d", i), keys); err != nil {
				b.Fatal(err)
			}
		}
	})
}
