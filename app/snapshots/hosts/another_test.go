package hosts_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/hosts"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/objstore/s3test"
	"github.com/boxsnap/boxsnap/providers/local/ship"
)

// TestAForkOfAnotherHostsBoxFetchesEveryObject: two cores, each with a
// data folder of its own, on one database and one bucket. A box's tree
// taken on host-a (small files, a folder, a large file that ships as
// chunks, an empty file, a link, their modes) is forked by host-b's local
// backend while host-a still owns the box: host-b's cache is empty, so
// every object is fetched from the bucket and checked, and the fork holds
// the tree as it was at the take, byte-exact, not the files host-a's box
// changed after it. Through the binary, e2e's TestForkOnAnotherHost forks
// such a snapshot on host-b through the API and the CLI.
func TestAForkOfAnotherHostsBoxFetchesEveryObject(t *testing.T) {
	srv := s3test.Start(t)
	cfg := srv.Bucket(t)
	bucket, err := objstore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	remote := &ship.Remote{Objects: bucket, Keys: bucket.Config()}
	pool := dbtest.New(t)
	mk := func(host string) *coretest.Env {
		root := t.TempDir()
		_ = local.Passable(root, os.TempDir())
		e, err := coretest.Build(context.Background(), pool, coretest.Options{Host: host, LocalRoot: root, ContentStore: remote})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.Stop)
		return e
	}
	ctx := context.Background()
	a, b := mk("host-a"), mk("host-b")
	box := a.Box(t, snapshots.Owner(), "amber-fox")
	dir := a.Local.BoxDir(providers.Guest{Ref: box.GuestRef})
	big := make([]byte, 9<<20)
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{
		"notes.txt": []byte("on host-a"), "src/main.go": []byte("package main\n"), "src/deep/er/x.txt": []byte("x"),
		"big.bin": big, "empty": nil,
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "src/main.go"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("src/main.go", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	want := treeOf(t, dir)
	sn := a.TakeReady(t, snapshots.Owner(), "amber-fox", "one")
	// host-a's box moves on; host-b must bring back the snapshot's tree.
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("changed on host-a after the take"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := filesUnder(t, filepath.Join(b.Local.Root(), "content")); n != 0 {
		t.Fatalf("host-b's cache holds %d files before the fork; want none", n)
	}

	fork, err := b.Local.ForkSnapshot(ctx, snapshots.RefOf(sn, box), providers.BoxIdentity{ID: "bx0forkedonb", Name: "forked-on-b", Kind: box.Kind}, nil)
	if err != nil {
		t.Fatalf("fork on host-b: %v", err)
	}
	sameTree(t, "the fork on host-b", want, treeOf(t, b.Local.BoxDir(fork)))
}

// treeOf is every path under dir but the box's own .boxsnap folder, each
// with its type, mode and content's hash, or its link's target.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		if rel == ".boxsnap" {
			return fs.SkipDir
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		v := fi.Mode().String()
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			v += " -> " + target
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += fmt.Sprintf(" %d %x", len(data), sha256.Sum256(data))
		}
		out[rel] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, what string, want, got map[string]string) {
	t.Helper()
	for p, v := range want {
		if got[p] != v {
			t.Errorf("%s: %s is %q, want %q", what, p, got[p], v)
		}
	}
	for p, v := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s holds %s (%s), which the snapshot does not", what, p, v)
		}
	}
}

// filesUnder counts the files under dir; none when it is not there.
func filesUnder(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestHostTakeoverFromTheBucket(t *testing.T) {
	srv := s3test.Start(t)
	cfg := srv.Bucket(t)
	bucket, err := objstore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	remote := &ship.Remote{Objects: bucket, Keys: bucket.Config()}
	pool := dbtest.New(t)
	clk := newClock()
	mk := func(host string) *coretest.Env {
		root := t.TempDir()
		_ = local.Passable(root, os.TempDir())
		e, err := coretest.Build(context.Background(), pool, coretest.Options{Host: host, LocalRoot: root, ContentStore: remote, Now: clk.now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.Stop)
		return e
	}
	ctx := context.Background()
	a, b := mk("host-a"), mk("host-b")
	box := a.Box(t, snapshots.Owner(), "amber-fox")
	if err := os.WriteFile(filepath.Join(a.Local.BoxDir(providers.Guest{Ref: box.GuestRef}), "notes.txt"), []byte("on host-a"), 0o644); err != nil {
		t.Fatal(err)
	}
	a.TakeReady(t, snapshots.Owner(), "amber-fox", "last")
	a.Stop()
	clk.forward(hosts.SeenAliveFor + time.Minute)
	if err := b.Hosts.Seen(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Hosts.MarkGone(ctx, snapshots.Owner(), "host-a"); err != nil {
		t.Fatal(err)
	}
	res, err := b.Hosts.TakeOver(ctx, snapshots.Owner(), "host-a", "")
	if err != nil || len(res.Taken) != 1 {
		t.Fatalf("takeover: %+v %v", res, err)
	}
	got := b.Wait(t, &snapshots.Operation{ID: res.Taken[0].Operation})
	if got.State != snapshots.OpDone {
		t.Fatalf("takeover's restore: %s %s", got.State, coretest.Deref(got.Error))
	}
	data, _ := os.ReadFile(filepath.Join(b.Local.BoxDir(providers.Guest{Ref: box.GuestRef}), "notes.txt"))
	if string(data) != "on host-a" {
		t.Fatalf("on host-b: %q", data)
	}
	events, err := b.Boxes.BoxLog(ctx, snapshots.Owner(), "amber-fox", 20)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if e.Kind == hosts.EvTakenOver && e.Words == "taken over from host host-a, gone, by host host-b, restored there from ‘last’" {
			return
		}
	}
	t.Fatalf("the box log does not say it was taken over: %+v", events)
}
