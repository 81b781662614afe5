package objstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/boxsnap/boxsnap/providers"
)

// Check asks the store what a take will ask of it: that the bucket is
// there, and that an object can be written, read back whole and deleted
// under the prefix. It answers the first refusal, in words.
func (b *Bucket) Check(ctx context.Context) error {
	ok, err := b.c.BucketExists(ctx, b.cfg.Bucket)
	if err != nil {
		return b.refuse(err, "check", b.cfg.Bucket)
	}
	if !ok {
		return &providers.RefusedError{Why: fmt.Sprintf(noBucketWords, b.cfg.hostPort(), b.cfg.Bucket, b.cfg.Bucket)}
	}
	probe := []byte("boxsnap checks it can write, read and delete here\n")
	sum := sha256.Sum256(probe)
	key := b.cfg.Prefix + "check/" + hex.EncodeToString(sum[:8])
	if err := b.Put(ctx, key, bytes.NewReader(probe), int64(len(probe))); err != nil {
		return err
	}
	if err := b.Get(ctx, key, hex.EncodeToString(sum[:]), io.Discard); err != nil {
		return err
	}
	return b.Delete(ctx, key)
}
