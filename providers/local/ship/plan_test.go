package ship

import (
	"bytes"
	"crypto/rand"
	"testing"

	"github.com/restic/chunker"
)

// TestChunkListsRoundTrip: the chunker's fixed polynomial is one it can
// use (irreducible), its chunks cover a file whole and in order, and a
// chunk list reads back as written. The file is longer than the
// chunker's largest chunk, so it is cut at least once whatever its bytes
// (5 MiB of random bytes held no cut point about once in a hundred runs).
func TestChunkListsRoundTrip(t *testing.T) {
	if !Pol.Irreducible() {
		t.Fatalf("the chunker's polynomial %v is reducible", Pol)
	}
	p := make([]byte, chunker.MaxSize+1<<20)
	_, _ = rand.Read(p)
	chunks, err := cut(bytes.NewReader(p))
	if err != nil {
		t.Fatal(err)
	}
	var off int64
	for _, c := range chunks {
		if c.off != off {
			t.Fatalf("chunk at %d, want %d", c.off, off)
		}
		off += c.len
	}
	if off != int64(len(p)) || len(chunks) < 2 {
		t.Fatalf("%d chunks cover %d of %d bytes", len(chunks), off, len(p))
	}
	back, err := parseList(formatList(chunks))
	if err != nil || len(back) != len(chunks) || back[len(back)-1] != chunks[len(chunks)-1] {
		t.Fatalf("the list read back as %v (%v)", back, err)
	}
}
