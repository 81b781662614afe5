package local

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// TestBrowseRacingEvictionReadsWhole: a read of a snapshot's file whose
// content an eviction of the cache removes right after it was fetched,
// before it was opened, fetches it again and reads it whole; it does not
// report the content missing.
func TestBrowseRacingEvictionReadsWhole(t *testing.T) {
	e, _, _ := setupStored(t)
	want := randomBytes(t, 200<<10)
	if err := os.WriteFile(filepath.Join(e.dir, "c.bin"), want, 0o644); err != nil {
		t.Fatal(err)
	}
	_, ref := e.take(t)
	m, err := e.b.Manifest(ref.Ref)
	if err != nil {
		t.Fatal(err)
	}
	for h := range m.Hashes() {
		_ = os.Remove(e.b.ContentPath(h))
	}
	// The eviction runs once, just after the first fetch.
	fetch := e.b.Store.Fetch
	var evicted atomic.Bool
	e.b.Store.Fetch = func(ctx context.Context, need map[string]int64) error {
		err := fetch(ctx, need)
		if !evicted.Swap(true) {
			for h := range need {
				_ = os.Remove(e.b.ContentPath(h))
			}
		}
		return err
	}
	var got bytes.Buffer
	if _, err := e.b.ReadFile(e.ctx, ref, "c.bin", &got); err != nil || !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("a read racing an eviction: %v (byte-exact %v)", err, bytes.Equal(got.Bytes(), want))
	}
	evicted.Store(false)
	if err := e.b.CheckReadable(e.ctx, ref, "."); err != nil {
		t.Fatalf("a check of the snapshot's files racing an eviction: %v", err)
	}
}
