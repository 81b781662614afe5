package objstore_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/objstore/s3test"
)

// TestBucketOverTLS: a content store reached over HTTPS, by a real S3
// server serving TLS, checks the server's certificate: with
// BOXSNAP_CONTENT_STORE_CA_FILE naming the CA that signed it, the check
// passes and an object goes in and comes back byte-exact; without it, or
// with a CA that did not sign it, the store is refused in words that say
// the certificate is not trusted and how to trust it, never that the store
// does not answer; an https:// endpoint on a plain HTTP server is refused
// saying it answers plain HTTP.
func TestBucketOverTLS(t *testing.T) {
	ctx := context.Background()
	srv := s3test.StartTLS(t)
	good := srv.Bucket(t)
	if !strings.HasPrefix(good.Endpoint, "https://") || good.CAFile == "" {
		t.Fatalf("the TLS server's settings: %s with CA file %q", good.Endpoint, good.CAFile)
	}
	b := open(t, good)
	if err := b.Check(ctx); err != nil {
		t.Fatalf("the bucket over TLS, its CA trusted, fails its check: %v", err)
	}
	want := []byte("shipped over TLS")
	key := good.ContentKey(hashOf(want))
	if err := b.Put(ctx, key, bytes.NewReader(want), int64(len(want))); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := b.Get(ctx, key, hashOf(want), &got); err != nil || !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("the object over TLS came back as %q (%v)", got.Bytes(), err)
	}

	untrusted := func(name string, cfg objstore.Config) {
		t.Run(name, func(t *testing.T) {
			err := open(t, cfg).Check(ctx)
			refused(t, err, "the content store at "+strings.TrimPrefix(cfg.Endpoint, "https://")+" offers a TLS certificate boxsnap does not trust", cfg.SecretKey)
			refused(t, err, "set BOXSNAP_CONTENT_STORE_CA_FILE to the PEM certificate of the CA that signed it", cfg.SecretKey)
			if strings.Contains(err.Error(), "does not answer") {
				t.Errorf("an untrusted certificate reads as a store that does not answer: %v", err)
			}
			if !errors.Is(err, providers.ErrRefused) {
				t.Errorf("%v is not providers.ErrRefused", err)
			}
		})
	}
	noCA := good
	noCA.CAFile = ""
	untrusted("no CA file", noCA)
	other := s3test.StartTLS(t) // a CA of its own, which never signed srv's certificate
	wrongCA := good
	wrongCA.CAFile = other.CAFile
	untrusted("another CA", wrongCA)

	t.Run("https on a plain server", func(t *testing.T) {
		plain := s3test.Start(t)
		cfg := plain.Bucket(t)
		cfg.Endpoint = "https://" + strings.TrimPrefix(cfg.Endpoint, "http://")
		err := open(t, cfg).Check(ctx)
		refused(t, err, "answers plain HTTP, not HTTPS: set BOXSNAP_CONTENT_STORE_ENDPOINT to http://"+strings.TrimPrefix(cfg.Endpoint, "https://"), cfg.SecretKey)
	})
}
