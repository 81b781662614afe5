package objstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Objects is what the local backend asks of a content store: a put that
// may be repeated (a key names its bytes), a get that checks what it read
// against the SHA-256 the caller expects, a head and a delete.
type Objects interface {
	Put(ctx context.Context, key string, r io.Reader, size int64) error
	Get(ctx context.Context, key, sum string, w io.Writer) error
	Head(ctx context.Context, key string) (size int64, ok bool, err error)
	Delete(ctx context.Context, key string) error
}

// Bucket is Objects on an S3 bucket, through minio-go.
type Bucket struct {
	cfg Config
	c   *minio.Client
}

var _ Objects = (*Bucket)(nil)

// Open makes the client for the bucket; it asks the server nothing (Check
// does).
func Open(cfg Config) (*Bucket, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	tr, err := cfg.transport()
	if err != nil {
		return nil, err
	}
	opts := &minio.Options{
		Creds:  credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure: cfg.secure(),
		Region: cfg.Region,
		// Path-style requests: a bucket need not have a DNS name of its own.
		BucketLookup: minio.BucketLookupPath,
		// A few tries, so an unreachable store is said within seconds.
		MaxRetries: 3,
	}
	if tr != nil {
		opts.Transport = tr
	}
	c, err := minio.New(cfg.hostPort(), opts)
	if err != nil {
		return nil, fmt.Errorf("the content store's endpoint %q: %w", cfg.hostPort(), err)
	}
	return &Bucket{cfg: cfg, c: c}, nil
}

// Config is the bucket's settings.
func (b *Bucket) Config() Config { return b.cfg }

// Put writes size bytes from r under key.
func (b *Bucket) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	_, err := b.c.PutObject(ctx, b.cfg.Bucket, key, r, size, minio.PutObjectOptions{
		ContentType: "application/octet-stream",
		// The content's hash is checked on every read; an MD5 on the way in
		// costs a pass for nothing more.
		SendContentMd5: false,
	})
	if err != nil {
		return b.refuse(err, "put", key)
	}
	return nil
}

// Get copies the object under key into w, checking that its SHA-256 is
// sum (hex); a different hash is ErrCorrupt, and w then holds bytes the
// caller must throw away. An empty sum checks nothing.
func (b *Bucket) Get(ctx context.Context, key, sum string, w io.Writer) error {
	obj, err := b.c.GetObject(ctx, b.cfg.Bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return b.refuse(err, "get", key)
	}
	defer func() { _ = obj.Close() }()
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(callerWriter{w}, h), obj); err != nil {
		var we *writeError
		if errors.As(err, &we) {
			return we.err
		}
		return b.refuse(err, "get", key)
	}
	if sum != "" && hex.EncodeToString(h.Sum(nil)) != sum {
		return Corrupt(b.cfg, key)
	}
	return nil
}

// writeError marks a failure of Get's writer, which is the caller's and
// no refusal of the store.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }

// callerWriter marks its writer's errors as writeErrors.
type callerWriter struct{ w io.Writer }

func (c callerWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err != nil {
		err = &writeError{err}
	}
	return n, err
}

// Head says whether key is in the bucket and its size.
func (b *Bucket) Head(ctx context.Context, key string) (int64, bool, error) {
	info, err := b.c.StatObject(ctx, b.cfg.Bucket, key, minio.StatObjectOptions{})
	if err != nil {
		if r := minio.ToErrorResponse(err); r.Code == "NoSuchKey" || r.StatusCode == http.StatusNotFound && r.Code != "NoSuchBucket" {
			return 0, false, nil
		}
		return 0, false, b.refuse(err, "head", key)
	}
	return info.Size, true, nil
}

// Delete removes key; a key that is not there is no error.
func (b *Bucket) Delete(ctx context.Context, key string) error {
	if err := b.c.RemoveObject(ctx, b.cfg.Bucket, key, minio.RemoveObjectOptions{}); err != nil {
		if r := minio.ToErrorResponse(err); r.Code == "NoSuchKey" {
			return nil
		}
		return b.refuse(err, "delete", key)
	}
	return nil
}
