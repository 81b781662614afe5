package objstore

import (
	"context"
	"errors"
	"io"
	"strings"

	"github.com/minio/minio-go/v7"
)

// RangeGetter reads part of an object: n bytes from off, into w. Bucket
// answers it with a ranged GET; a content store without it is read whole.
type RangeGetter interface {
	GetRange(ctx context.Context, key string, off, n int64, w io.Writer) error
}

var _ RangeGetter = (*Bucket)(nil)

// GetRange copies n bytes of the object under key from off into w,
// checking nothing (the caller checks each object it cuts out by its
// hash). A range the object does not hold is ErrCorrupt: the pack is
// shorter than the ledger records.
func (b *Bucket) GetRange(ctx context.Context, key string, off, n int64, w io.Writer) error {
	opts := minio.GetObjectOptions{}
	if err := opts.SetRange(off, off+n-1); err != nil {
		return Corrupt(b.cfg, key)
	}
	obj, err := b.c.GetObject(ctx, b.cfg.Bucket, key, opts)
	if err != nil {
		return b.refuse(err, "get", key)
	}
	defer func() { _ = obj.Close() }()
	if _, err := io.Copy(callerWriter{w}, obj); err != nil {
		var we *writeError
		if errors.As(err, &we) {
			return we.err
		}
		if minio.ToErrorResponse(err).Code == "InvalidRange" {
			return Corrupt(b.cfg, key)
		}
		return b.refuse(err, "get", key)
	}
	return nil
}

// PackKey is the key of the pack named name (random hex: a pack is never
// rewritten, and two takes never share one).
func (c Config) PackKey(name string) string {
	return c.Prefix + "packs/" + name[:2] + "/" + name[2:]
}

// ContentHash answers the hash a content object's key names, and false
// for any other key (a manifest's, a label's, a chunk list's).
func (c Config) ContentHash(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, c.Prefix+"content/")
	if !ok || len(rest) != 65 || rest[2] != '/' {
		return "", false
	}
	return rest[:2] + rest[3:], true
}
