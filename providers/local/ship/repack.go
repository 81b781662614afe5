package ship

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"

	"github.com/boxsnap/boxsnap/providers/local/objstore"
)

// Repacker rewrites the live objects of packs the ledger found mostly
// freed into a new pack, so the bucket's room their freed objects held
// comes back; it deletes as the sweep asks, like any bucket.
type Repacker struct {
	Objects objstore.Objects
	Keys    objstore.Config
}

// Delete deletes key from the bucket.
func (r *Repacker) Delete(ctx context.Context, key string) error {
	return r.Objects.Delete(ctx, key)
}

// NewPackKey is the key of a pack not yet in the bucket: random, as a
// take's packs are, so no two puts ever share one.
func (r *Repacker) NewPackKey() string {
	return newPackKey(r.Keys)
}

// Repack reads each object keys[i] (lens[i] bytes at offs[i] in pack
// packs[i]), checks it against the SHA-256 its key names, and puts them
// one after another, then their index and the trailer, as a new pack
// under key. It answers the new pack's size and where each object lies in
// it. An object that does not match its hash stops it before the put: a
// repack never carries a corrupt object on as if whole.
func (r *Repacker) Repack(ctx context.Context, key string, keys, packs []string, offs, lens []int64) (int64, []int64, error) {
	got, err := r.readLive(ctx, keys, packs, offs, lens)
	if err != nil {
		return 0, nil, err
	}
	var buf bytes.Buffer
	var index []byte
	at := make([]int64, len(keys))
	for i, k := range keys {
		b := got[i]
		sum, ok := r.Keys.ContentHash(k)
		h := sha256.Sum256(b)
		if !ok || hex.EncodeToString(h[:]) != sum {
			return 0, nil, objstore.Corrupt(r.Keys, k)
		}
		at[i] = int64(buf.Len())
		index = fmt.Appendf(index, packIndexLine, sum, at[i], len(b))
		buf.Write(b)
	}
	index = fmt.Appendf(index, packTrailer, buf.Len())
	buf.Write(index)
	size := int64(buf.Len())
	if err := r.Objects.Put(ctx, key, bytes.NewReader(buf.Bytes()), size); err != nil {
		return 0, nil, err
	}
	return size, at, nil
}

// readLive reads the objects from their packs, neighbours in a pack by
// one ranged GET across gaps up to rangeGap, and answers each object's
// bytes, unchecked.
func (r *Repacker) readLive(ctx context.Context, keys, packs []string, offs, lens []int64) ([][]byte, error) {
	out := make([][]byte, len(keys))
	byPack := map[string][]int{}
	for i := range keys {
		if lens[i] == 0 {
			out[i] = []byte{}
			continue
		}
		byPack[packs[i]] = append(byPack[packs[i]], i)
	}
	type span struct {
		pack       string
		start, end int64
		objs       []int
	}
	var spans []span
	for p, is := range byPack {
		sort.Slice(is, func(a, b int) bool { return offs[is[a]] < offs[is[b]] })
		for _, i := range is {
			end := offs[i] + lens[i]
			if n := len(spans); n > 0 && spans[n-1].pack == p && offs[i]-spans[n-1].end <= rangeGap && end-spans[n-1].start <= rangeMost {
				spans[n-1].end = max(spans[n-1].end, end)
				spans[n-1].objs = append(spans[n-1].objs, i)
				continue
			}
			spans = append(spans, span{pack: p, start: offs[i], end: end, objs: []int{i}})
		}
	}
	err := each(ctx, shipWorkers, len(spans), func(ctx context.Context, si int) error {
		s := spans[si]
		var b bytes.Buffer
		var err error
		if rg, ok := r.Objects.(objstore.RangeGetter); ok {
			err = rg.GetRange(ctx, s.pack, s.start, s.end-s.start, &b)
		} else {
			err = r.Objects.Get(ctx, s.pack, "", &b)
			s.start = 0
		}
		if err != nil {
			return err
		}
		for _, i := range s.objs {
			lo, hi := offs[i]-s.start, offs[i]-s.start+lens[i]
			if lo < 0 || hi > int64(b.Len()) {
				return objstore.Corrupt(r.Keys, s.pack)
			}
			out[i] = b.Bytes()[lo:hi]
		}
		return nil
	})
	return out, err
}
