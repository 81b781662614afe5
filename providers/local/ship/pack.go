package ship

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"sync"

	"github.com/boxsnap/boxsnap/providers/local/objstore"
)

// PackBelow is the largest content object a take puts in a pack rather
// than on its own: every small file's content and every chunk of a large
// one (the chunker cuts at most 8 MiB), so a take's requests are its
// packs, its lists, its label and its manifest. Measured on versitygw on
// loopback, 16 puts at once, a put costs 3 to 7 ms whatever its size:
// objects of 4 KiB went at 1.4 MB/s, 64 KiB at 13, 1 MiB at 156, 8 MiB at
// 212 and 16 MiB at 192; only from about 8 MiB does an object alone use
// the link as a pack does.
const PackBelow = 8 << 20

// PackTarget is the size a pack is closed at: restic's default pack size,
// large enough that a take of small files makes few requests, small enough
// that a fetch of a few of its objects reads little more than them.
const PackTarget = 16 << 20

// packTrailer ends every pack: the offset of the pack's own index (a line
// per object: its SHA-256, offset and length), so the ledger's record of
// a pack can be rebuilt from the bucket alone.
const packTrailer = "boxsnap pack index at %016x\n"

// packIndexLine is one object's line in a pack's index: its SHA-256, its
// offset and its length.
const packIndexLine = "%s %d %d\n"

// PackLedger records packs: a take claims a pack before its put and
// records it with where each object lies once the put finished; a fetch
// locates objects in them. The ledger's Ledger answers it; a Ledger that
// does not leaves every object on its own.
type PackLedger interface {
	ClaimPack(ctx context.Context, pack string, size int64) error
	StoredPack(ctx context.Context, pack string, keys []string, offsets, lengths []int64) error
	Locate(ctx context.Context, keys []string, found func(key, pack string, off, n, packSize int64)) error
}

// packLedger is the Remote's ledger as a PackLedger, or nil when objects
// go on their own.
func (s *Shipper) packLedger() PackLedger {
	if s.Remote == nil || s.Remote.Singles {
		return nil
	}
	pl, _ := s.Remote.Ledger.(PackLedger)
	return pl
}

// pack is the objects one put carries, where each starts, and its index.
type pack struct {
	pieces []piece
	offs   []int64
	index  []byte
	size   int64
}

// packsOf puts the content pieces of todo no larger than PackBelow in
// packs of about PackTarget, and answers the rest.
func (s *Shipper) packsOf(todo []piece) (packs []*pack, rest []piece) {
	cur := &pack{}
	// seal ends the pack: its index follows its objects, then the
	// trailer naming where the index starts.
	seal := func() {
		if len(cur.pieces) == 0 {
			return
		}
		cur.index = append(cur.index, fmt.Sprintf(packTrailer, cur.size)...)
		cur.size += int64(len(cur.index))
		packs = append(packs, cur)
		cur = &pack{}
	}
	for _, p := range todo {
		sum, ok := s.Remote.Keys.ContentHash(p.key)
		if !ok || p.data != nil || p.n > PackBelow {
			rest = append(rest, p)
			continue
		}
		if cur.size > 0 && cur.size+p.n > PackTarget {
			seal()
		}
		cur.pieces = append(cur.pieces, p)
		cur.offs = append(cur.offs, cur.size)
		cur.index = fmt.Appendf(cur.index, packIndexLine, sum, cur.size, p.n)
		cur.size += p.n
	}
	seal()
	return packs, rest
}

// shipPacks puts the pieces of todo that go in packs, several packs at
// once, each claimed before its put and recorded after it, and answers
// the pieces left to put on their own.
func (s *Shipper) shipPacks(ctx context.Context, todo []piece) ([]piece, int, error) {
	pl := s.packLedger()
	if pl == nil {
		return todo, 0, nil
	}
	packs, rest := s.packsOf(todo)
	err := each(ctx, max(s.Workers, shipWorkers), len(packs), func(ctx context.Context, i int) error {
		return s.putPack(ctx, pl, packs[i])
	})
	return rest, len(packs), err
}

// putPack claims a new pack's key, puts p under it and records it. A
// put that fails or is killed leaves the pack claimed and holding nothing
// in the ledger: its objects are not stored, a take again packs them
// anew, and the sweep deletes the pack when its claim runs out.
func (s *Shipper) putPack(ctx context.Context, pl PackLedger, p *pack) error {
	key := newPackKey(s.Remote.Keys)
	if err := pl.ClaimPack(ctx, key, p.size); err != nil {
		return err
	}
	r := &packReader{s: s, p: p}
	defer r.close()
	if err := s.Remote.Objects.Put(ctx, key, r, p.size); err != nil {
		return err
	}
	keys := make([]string, len(p.pieces))
	lengths := make([]int64, len(p.pieces))
	for i, pc := range p.pieces {
		keys[i], lengths[i] = pc.key, pc.n
	}
	return pl.StoredPack(ctx, key, keys, p.offs, lengths)
}

// newPackKey is the key of a pack not yet in the bucket: random, so no
// two puts ever share one.
func newPackKey(keys objstore.Config) string {
	var name [16]byte
	_, _ = rand.Read(name[:])
	return keys.PackKey(hex.EncodeToString(name[:]))
}

// packReader reads a pack's objects one file at a time, then its index.
type packReader struct {
	s    *Shipper
	p    *pack
	i    int
	cur  io.ReadCloser
	tail io.Reader
}

func (r *packReader) Read(b []byte) (int, error) {
	for {
		if r.cur != nil {
			n, err := r.cur.Read(b)
			if err == io.EOF {
				_ = r.cur.Close()
				r.cur = nil
				if n > 0 {
					return n, nil
				}
				continue
			}
			return n, err
		}
		if r.i < len(r.p.pieces) {
			rc, err := r.s.reader(r.p.pieces[r.i])
			if err != nil {
				return 0, err
			}
			r.cur, r.i = rc, r.i+1
			continue
		}
		if r.tail == nil {
			r.tail = bytes.NewReader(r.p.index)
		}
		return r.tail.Read(b)
	}
}

func (r *packReader) close() {
	if r.cur != nil {
		_ = r.cur.Close()
	}
}

// each runs fn on 0..n-1 from workers goroutines; the first failure
// cancels the rest and is the answer.
func each(ctx context.Context, workers, n int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	ch := make(chan int)
	for range min(workers, n) {
		wg.Go(func() {
			for i := range ch {
				if err := fn(ctx, i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
						cancel()
					}
					mu.Unlock()
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case ch <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(ch)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}
