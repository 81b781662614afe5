package ship

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"slices"
	"testing"

	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// BenchmarkPlanKeys measures what a take's shipping does for every file
// of its snapshot before it puts anything: the objects it names and
// their keys, sorted, and which its base holds, on a manifest of 46,000
// small files, as the bucket bench's tree has.
func BenchmarkPlanKeys(b *testing.B) {
	s := &Shipper{Store: store.NewStore(b.TempDir()), Log: slog.New(slog.DiscardHandler),
		Remote: &Remote{Keys: objstore.Config{Bucket: "b", Prefix: "p/"}}}
	m := &store.Manifest{ID: "snbench"}
	for i := range 46_000 {
		sum := sha256.Sum256(fmt.Appendf(nil, "file %d", i%45_000))
		m.Entries = append(m.Entries, store.Entry{Path: fmt.Sprintf("d%03d/f%05d", i/100, i), Type: store.TypeFile,
			Hash: hex.EncodeToString(sum[:]), Size: int64(i % 9000)})
	}
	ctx := context.Background()
	for b.Loop() {
		pieces, err := s.plan(ctx, m)
		if err != nil {
			b.Fatal(err)
		}
		keys := make([]string, 0, len(pieces))
		for _, p := range pieces {
			keys = append(keys, p.key)
		}
		slices.Sort(keys)
	}
}
