package ship

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/boxsnap/boxsnap/providers/local/objstore"
)

// PackRecord is what the ledger records of one pack: its key, its size,
// and the objects it says lie in it, where and how long.
type PackRecord struct {
	Key        string
	Size       int64
	Keys       []string
	Offs, Lens []int64
}

// indexed is where a pack's own index puts one object.
type indexed struct{ off, n int64 }

// CheckPack reads pack rec.Key's own index from the bucket (the trailer
// at its end, then the index the trailer names) and answers how the
// ledger's record of it differs, a sentence each; none when they agree.
// The index may name more than the record: the objects freed since. An
// error is a bucket that did not answer.
func (r *Repacker) CheckPack(ctx context.Context, rec PackRecord) ([]string, error) {
	size, ok, err := r.Objects.Head(ctx, rec.Key)
	if err != nil {
		return nil, err
	}
	if !ok {
		if len(rec.Keys) == 0 {
			return nil, nil // kept for the grace only, and gone since
		}
		return []string{fmt.Sprintf(packMissingWords, rec.Key, len(rec.Keys))}, nil
	}
	if size != rec.Size {
		return []string{fmt.Sprintf(packSizeWords, rec.Key, size, rec.Size)}, nil
	}
	index, err := r.readPackIndex(ctx, rec.Key, size)
	if errors.Is(err, objstore.ErrCorrupt) {
		return []string{fmt.Sprintf(packIndexWords, rec.Key)}, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for i, k := range rec.Keys {
		sum, _ := r.Keys.ContentHash(k)
		if at, ok := index[sum]; !ok || at.off != rec.Offs[i] || at.n != rec.Lens[i] {
			out = append(out, fmt.Sprintf(packObjectWords, sum, rec.Offs[i], rec.Lens[i], rec.Key))
		}
	}
	return out, nil
}

// readPackIndex reads the index at the end of the pack under key, size
// bytes long, by two ranged GETs: where each object lies, by its SHA-256.
// A pack that does not end in an index that fits it is ErrCorrupt.
func (r *Repacker) readPackIndex(ctx context.Context, key string, size int64) (map[string]indexed, error) {
	tail := int64(len(fmt.Sprintf(packTrailer, 0)))
	if size < tail {
		return nil, objstore.Corrupt(r.Keys, key)
	}
	var b bytes.Buffer
	if err := r.getRange(ctx, key, size-tail, tail, &b); err != nil {
		return nil, err
	}
	var at int64
	if _, err := fmt.Sscanf(b.String(), packTrailer, &at); err != nil || at < 0 || at > size-tail {
		return nil, objstore.Corrupt(r.Keys, key)
	}
	b.Reset()
	if at < size-tail {
		if err := r.getRange(ctx, key, at, size-tail-at, &b); err != nil {
			return nil, err
		}
	}
	out := map[string]indexed{}
	for line := range strings.Lines(b.String()) {
		var sum string
		var off, n int64
		if _, err := fmt.Sscanf(line, packIndexLine, &sum, &off, &n); err != nil || off < 0 || n < 0 || off+n > at {
			return nil, objstore.Corrupt(r.Keys, key)
		}
		out[sum] = indexed{off, n}
	}
	return out, nil
}

// getRange reads n bytes at off of key, by a ranged GET when the bucket
// has them.
func (r *Repacker) getRange(ctx context.Context, key string, off, n int64, w *bytes.Buffer) error {
	if rg, ok := r.Objects.(objstore.RangeGetter); ok {
		return rg.GetRange(ctx, key, off, n, w)
	}
	var all bytes.Buffer
	if err := r.Objects.Get(ctx, key, "", &all); err != nil {
		return err
	}
	if off+n > int64(all.Len()) {
		return objstore.Corrupt(r.Keys, key)
	}
	w.Write(all.Bytes()[off : off+n])
	return nil
}
