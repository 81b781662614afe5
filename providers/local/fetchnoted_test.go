package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/ship"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// TestARestoreFromTheBucketHashesNoFetchedCopyAgain: a restore on another
// host, onto a box on a disk image of its own (whose files cannot be
// staged, so they are copied from the host's cache), fetches the
// snapshot's objects from packs by several ranged GETs at once, checking
// each as it comes; the copies it puts in the cache are noted as checked
// (content.Copier.Checked), so the restore does not read each back to
// hash it again, and the box is byte-exact. A cached copy changed after
// the fetch (its change time moved) is hashed again, found corrupt, and
// the restore refuses with the snapshot marked damaged and the box as it
// was. After each, the cache is within its bound.
func TestARestoreFromTheBucketHashesNoFetchedCopyAgain(t *testing.T) {
	if os.Geteuid() != 0 {
		skipOrFailInCI(t, "a box's disk image needs root")
	}
	loopOrSkip(t)
	e, objs, bucket := setupStored(t)
	files := map[string][]byte{}
	for i := range 40 {
		files[fmt.Sprintf("d%d/f%02d.bin", i%4, i)] = randomBytes(t, 20<<10+i*1024)
	}
	files["big.bin"] = randomBytes(t, 6<<20) // in chunks, put together in the cache
	for name, data := range files {
		e.write(t, name, string(data))
	}
	_, ref := e.take(t)

	const bound = 512 << 10
	other, err := New(Config{Root: t.TempDir(), Install: "in-test", NoSync: true, StopTimeout: 2 * time.Second, DiskImages: true,
		ContentStore: &ship.Remote{Objects: objs, Keys: bucket.Config()}, ContentCacheBytes: bound})
	if err != nil {
		t.Fatal(err)
	}
	unmountAtEnd(t, other)
	g, err := other.Acquire(e.ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: e.g.Ref, Kind: "linux"},
		Limits: providers.BoxLimits{DiskBytes: 64 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	if !other.HasImage(g.Ref) {
		t.Fatal("the box on the other host has no disk image: nothing here is tested")
	}
	dir := other.BoxDir(g)

	// The fetch's copies, as the restore will read them.
	fetch := other.Writer.Fetch
	var noted, fetched int
	other.Writer.Fetch = func(fctx context.Context, need map[string]int64, sink func(string, []byte) error, keep bool) error {
		err := fetch(fctx, need, sink, keep)
		for h := range need {
			var st unix.Stat_t
			if unix.Lstat(other.ContentPath(h), &st) != nil {
				continue
			}
			fetched++
			if other.Checked(h, &st) {
				noted++
			}
		}
		return err
	}
	if _, err := other.RestoreSnapshot(e.ctx, g, ref, providers.StepRollback, nil); err != nil {
		t.Fatalf("restore on the other host: %v", err)
	}
	if fetched < len(files) {
		t.Fatalf("the restore's fetch put %d of %d pieces in the cache: nothing here is tested", fetched, len(files))
	}
	if noted != fetched {
		t.Fatalf("%d of the %d copies the fetch put in the cache are noted as checked; the restore reads the rest back to hash them again", noted, fetched)
	}
	for name, want := range files {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s restored on the other host is not byte-exact (%v)", name, err)
		}
	}
	if n := cacheHeld(t, other); n > bound+cacheMargin {
		t.Fatalf("after the restore the other host's cache holds %d bytes; its bound is %d (and %d more)", n, bound, cacheMargin)
	}

	// The box changes; the cache loses the snapshot's content; a copy the
	// fetch puts there is spoilt, its size kept, before the restore reads it.
	for name := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("changed on the other host"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, err := other.Manifest(ref.ID)
	if err != nil {
		t.Fatal(err)
	}
	for h := range m.Hashes() {
		_ = os.Remove(other.ContentPath(h))
	}
	spoilt := hashOf(files["d1/f05.bin"])
	other.Writer.Fetch = func(fctx context.Context, need map[string]int64, sink func(string, []byte) error, keep bool) error {
		err := fetch(fctx, need, sink, keep)
		p := other.ContentPath(spoilt)
		if data, rerr := os.ReadFile(p); rerr == nil {
			data[0] ^= 0xff
			if cerr := os.Chmod(p, 0o644); cerr == nil {
				if werr := os.WriteFile(p, data, 0o444); werr != nil {
					t.Errorf("spoil the cached copy: %v", werr)
				}
			}
		}
		return err
	}
	before := listing(t, dir)
	err = func() error {
		_, err := other.RestoreSnapshot(e.ctx, g, ref, providers.StepRollback, nil)
		return err
	}()
	if err == nil || !errors.Is(err, providers.ErrRefused) || !strings.Contains(err.Error(), "Nothing was changed.") {
		t.Fatalf("a restore reading a cached copy spoilt after the fetch answered %v; want it refused, nothing changed", err)
	}
	if after := listing(t, dir); after != before {
		t.Fatalf("the refused restore changed the box:\nbefore %s\nafter %s", before, after)
	}
	if _, err := os.Stat(filepath.Join(other.SnapDir(ref.ID), store.FileDamaged)); err != nil {
		t.Fatalf("the snapshot is not marked damaged: %v", err)
	}
	if n := cacheHeld(t, other); n > bound+cacheMargin {
		t.Fatalf("after the refused restore the other host's cache holds %d bytes; its bound is %d (and %d more)", n, bound, cacheMargin)
	}
}
