package objstore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/objstore/s3test"
)

func hashOf(p []byte) string {
	s := sha256.Sum256(p)
	return hex.EncodeToString(s[:])
}

func open(t *testing.T, cfg objstore.Config) *objstore.Bucket {
	t.Helper()
	b, err := objstore.Open(cfg)
	if err != nil {
		t.Fatalf("open %s: %v", cfg, err)
	}
	return b
}

// refused checks err is a refusal that says want and never the secret.
func refused(t *testing.T, err error, want string, secret string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no refusal; want one saying %q", want)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("refusal %q does not say %q", err, want)
	}
	if secret != "" && strings.Contains(err.Error(), secret) {
		t.Errorf("refusal %q shows the secret key", err)
	}
}

// TestBucketRefusals: a bad bucket is refused in words, by a real S3
// server: unreachable, wrong keys, no such bucket, no room, a missing or
// corrupt object; a refused put leaves nothing behind.
func TestBucketRefusals(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	good := srv.Bucket(t)
	if err := open(t, good).Check(ctx); err != nil {
		t.Fatalf("the good bucket fails its check: %v", err)
	}

	t.Run("unreachable", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		_ = l.Close()
		cfg := good
		cfg.Endpoint = "http://" + addr
		err = open(t, cfg).Check(ctx)
		refused(t, err, "the content store at "+addr+" does not answer", cfg.SecretKey)
		if !errors.Is(err, providers.ErrUnreachable) {
			t.Errorf("%v is not providers.ErrUnreachable", err)
		}
	})
	t.Run("wrong keys", func(t *testing.T) {
		cfg := good
		cfg.SecretKey = "not-the-secret-" + cfg.SecretKey[:4]
		b := open(t, cfg)
		err := b.Check(ctx)
		refused(t, err, "refused boxsnap's keys for bucket \""+cfg.Bucket+"\"", cfg.SecretKey)
		if !errors.Is(err, providers.ErrRefused) {
			t.Errorf("%v is not providers.ErrRefused", err)
		}
		err = b.Put(ctx, "x", strings.NewReader("x"), 1)
		refused(t, err, "refused boxsnap's keys", cfg.SecretKey)
		if _, ok, _ := open(t, good).Head(ctx, "x"); ok {
			t.Errorf("a put with wrong keys left an object")
		}
	})
	t.Run("no such bucket", func(t *testing.T) {
		cfg := good
		cfg.Bucket = "not-" + good.Bucket
		b := open(t, cfg)
		refused(t, b.Check(ctx), "has no bucket \""+cfg.Bucket+"\"", cfg.SecretKey)
		refused(t, b.Put(ctx, "x", strings.NewReader("x"), 1), "has no bucket", cfg.SecretKey)
	})
	t.Run("missing object", func(t *testing.T) {
		key := good.ContentKey(hashOf([]byte("never put")))
		err := open(t, good).Get(ctx, key, hashOf([]byte("never put")), io.Discard)
		refused(t, err, "lacks object "+key+" that this snapshot names: the snapshot is damaged", "")
		if !errors.Is(err, objstore.ErrMissing) || !errors.Is(err, providers.ErrIncomplete) {
			t.Errorf("%v is not ErrMissing and providers.ErrIncomplete", err)
		}
	})
	t.Run("corrupt object", func(t *testing.T) {
		b := open(t, good)
		want := []byte("what the snapshot holds")
		key := good.ContentKey(hashOf(want))
		bad := []byte("what the bucket holds!!")
		if err := b.Put(ctx, key, bytes.NewReader(bad), int64(len(bad))); err != nil {
			t.Fatal(err)
		}
		err := b.Get(ctx, key, hashOf(want), io.Discard)
		refused(t, err, "object "+key+" in bucket \""+good.Bucket+"\" does not match its hash: the snapshot is damaged", "")
		if !errors.Is(err, objstore.ErrCorrupt) || !errors.Is(err, providers.ErrIncomplete) {
			t.Errorf("%v is not ErrCorrupt and providers.ErrIncomplete", err)
		}
	})
	t.Run("no room", func(t *testing.T) {
		dir := t.TempDir()
		if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=256k"); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("a small file system for a full bucket: %v", err)
			}
			t.Skipf("skipped: a small file system for a full bucket needs root: %v", err)
		}
		t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
		full := s3test.StartIn(t, dir)
		cfg := full.Bucket(t)
		b := open(t, cfg)
		big := bytes.Repeat([]byte("boxsnap"), 200_000)
		key := cfg.ContentKey(hashOf(big))
		err := b.Put(ctx, key, bytes.NewReader(big), int64(len(big)))
		refused(t, err, "has no room for more in bucket \""+cfg.Bucket+"\"", cfg.SecretKey)
		if !errors.Is(err, providers.ErrNoRoom) {
			t.Errorf("%v is not providers.ErrNoRoom", err)
		}
		if _, ok, _ := b.Head(ctx, key); ok {
			t.Errorf("a put with no room left an object")
		}
	})
}
