package boot

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/app/snapshots/hosts"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
	"github.com/boxsnap/boxsnap/providers/local/objstore/s3test"
)

// TestDoctorChecksTheContentStore: boxsnap doctor writes, reads back and
// deletes an object in the content store, and a bad one fails with its
// fix, never showing the secret key.
func TestDoctorChecksTheContentStore(t *testing.T) {
	srv := s3test.Start(t)
	sc := srv.Bucket(t)
	cfg := config.Config{ContentStore: "s3://" + sc.Bucket + "/boxsnap", ContentStoreEndpoint: srv.Endpoint, ContentStoreRegion: "us-east-1",
		ContentStoreAccessKey: srv.AccessKey, ContentStoreSecretKey: srv.SecretKey, LocalRoot: rootWithASnapshot(t)}
	got := contentStoreCheck(cfg)(t.Context())
	if len(got) != 3 || !got[0].OK || !strings.Contains(got[0].Detail, "an object was written, read back whole and deleted") {
		t.Fatalf("the doctor on a good bucket: %+v", got)
	}
	if want := hosts.UnshippedWords(1, 0); got[1].Detail != want || !strings.HasPrefix(want, "1 snapshot on this host is not in the content store yet") {
		t.Fatalf("the doctor on a host with a snapshot taken before the content store: %+v, want %q", got[1], want)
	}
	use, err := local.CacheUse(cfg.LocalRoot, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := hosts.CacheWords(use, time.Now()); !got[2].OK || got[2].Detail != want || !strings.Contains(want, "(25% of the ") {
		t.Fatalf("the doctor's word on the content cache: %+v, want %q", got[2], want)
	}
	for _, bad := range []struct {
		name string
		edit func(*config.Config)
		says string
	}{
		{"wrong keys", func(c *config.Config) { c.ContentStoreSecretKey = "wrong-" + srv.SecretKey }, "refused boxsnap's keys"},
		{"no such bucket", func(c *config.Config) { c.ContentStore = "s3://no-" + sc.Bucket }, "has no bucket"},
		{"unreachable", func(c *config.Config) { c.ContentStoreEndpoint = "http://127.0.0.1:1" }, "does not answer"},
	} {
		c := cfg
		bad.edit(&c)
		got := contentStoreCheck(c)(t.Context())
		if len(got) != 1 || got[0].OK || !strings.Contains(got[0].Detail, bad.says) || !strings.Contains(got[0].Fix, "BOXSNAP_CONTENT_STORE") {
			t.Errorf("%s: the doctor answered %+v; want it failed, saying %q, with its fix", bad.name, got, bad.says)
		}
		if strings.Contains(got[0].Detail+got[0].Fix, c.ContentStoreSecretKey) {
			t.Errorf("%s: the doctor shows the secret key", bad.name)
		}
	}
}

// rootWithASnapshot is a local backend's folder holding one snapshot, taken
// with no content store.
func rootWithASnapshot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	_ = local.Passable(root, os.TempDir())
	b, err := local.New(local.Config{ID: "local", Root: root, Install: "doctor-test", NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	g, err := b.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: "bx0backlog", Kind: "linux"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Snapshot(t.Context(), g, providers.SnapshotTake{Label: providers.Label{Box: g.Ref}}, nil); err != nil {
		t.Fatal(err)
	}
	return root
}
