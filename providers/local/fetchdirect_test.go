package local

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/ship"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// TestForkFromTheBucketWritesWhatItChecked: a fork on another host writes
// each file from the bytes it fetched and checked against their hash, never
// from a copy read back from the host's cache afterwards; and each of the
// fork's files is a file of its own, so what the box writes in it never
// reaches the host's content.
func TestForkFromTheBucketWritesWhatItChecked(t *testing.T) {
	e, objs, bucket := setupStored(t)
	files := map[string][]byte{
		"a.txt":      []byte("alpha\n"),
		"same.txt":   []byte("alpha\n"),
		"empty":      nil,
		"sub/b.bin":  randomBytes(t, 300<<10),
		"sub/big.db": randomBytes(t, 6<<20),
	}
	writeFiles(t, e.dir, files, 0o640)
	mtime := time.Date(2024, 3, 1, 12, 0, 0, 123456789, time.UTC)
	for name := range files {
		if err := os.Chtimes(filepath.Join(e.dir, name), mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	// One file is another user's: the fork gives it back to them.
	if err := os.Chown(filepath.Join(e.dir, "sub/b.bin"), 1234, 1235); err != nil {
		t.Fatal(err)
	}
	_, ref := e.take(t)

	other := otherHost(t, objs, bucket)
	// The host's disk spoils each small piece of content just after the
	// fetch checked it and put it in the cache.
	fetch := other.Writer.Fetch
	other.Writer.Fetch = func(ctx context.Context, need map[string]int64, sink func(string, []byte) error, keep bool) error {
		err := fetch(ctx, need, sink, keep)
		for h, n := range need {
			if n > ship.ChunkAbove {
				continue
			}
			p := other.ContentPath(h)
			if err := os.Chmod(p, 0o644); err == nil {
				_ = os.WriteFile(p, []byte("spoilt"), 0o444)
			}
		}
		return err
	}
	g, err := other.ForkSnapshot(e.ctx, ref, providers.BoxIdentity{ID: "bxforkedthere1", Kind: "linux"}, nil)
	if err != nil {
		t.Fatalf("fork on the other host: %v", err)
	}
	if _, err := os.Stat(filepath.Join(other.SnapDir(ref.ID), store.FileDamaged)); err == nil {
		t.Fatalf("the snapshot was marked damaged, though every object it names came from the bucket whole")
	}
	dir := other.BoxDir(g)
	for name, want := range files {
		p := filepath.Join(dir, name)
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s forked on the other host is not byte-exact (%v)", name, err)
		}
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != 0o640 || !fi.ModTime().Equal(mtime) {
			t.Fatalf("%s forked with mode %v and time %v (%v); want 0640 and %v", name, fi.Mode(), fi.ModTime(), err, mtime)
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && name == "sub/b.bin" && (st.Uid != 1234 || st.Gid != 1235) {
			t.Fatalf("%s forked owned by %d:%d; want 1234:1235", name, st.Uid, st.Gid)
		}
		cached, err := os.Stat(other.ContentPath(hashOf(want)))
		if err == nil && os.SameFile(fi, cached) {
			t.Fatalf("%s in the fork is the host's content file itself", name)
		}
	}
	// A restore on the first host, its cache emptied, writes over the
	// box's changed files from the bucket.
	for name := range files {
		if err := os.WriteFile(filepath.Join(e.dir, name), []byte("changed since"), 0o600); err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(e.b.ContentPath(hashOf(files[name])))
	}
	if err := e.restore(t, ref); err != nil {
		t.Fatalf("restore from the bucket: %v", err)
	}
	for name, want := range files {
		if got, err := os.ReadFile(filepath.Join(e.dir, name)); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s restored from the bucket is not byte-exact (%v)", name, err)
		}
	}
	// A write by the box reaches none of the host's content.
	before, _ := os.ReadFile(other.ContentPath(hashOf(files["sub/big.db"])))
	if err := os.WriteFile(filepath.Join(dir, "sub/big.db"), []byte("the box's own"), 0o640); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(other.ContentPath(hashOf(files["sub/big.db"]))); !bytes.Equal(before, after) || !bytes.Equal(after, files["sub/big.db"]) {
		t.Fatalf("a write in the fork changed the host's content")
	}
}

// hashOf is the content hash of data, as the store names it.
func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
