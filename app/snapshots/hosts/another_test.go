package hosts_test

import (
	"context"
	"crypto/rand"
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
	want := coretest.TreeOf(t, dir)
	sn := a.TakeReady(t, snapshots.Owner(), "amber-fox", "one")
	// host-a's box moves on; host-b must bring back the snapshot's tree.
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("changed on host-a after the take"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := coretest.FilesUnder(t, filepath.Join(b.Local.Root(), "content")); n != 0 {
		t.Fatalf("host-b's cache holds %d files before the fork; want none", n)
	}

	fork, err := b.Local.ForkSnapshot(ctx, snapshots.RefOf(sn, box), providers.BoxIdentity{ID: "bx0forkedonb", Name: "forked-on-b", Kind: box.Kind}, nil)
	if err != nil {
		t.Fatalf("fork on host-b: %v", err)
	}
	coretest.SameTree(t, "the fork on host-b", want, coretest.TreeOf(t, b.Local.BoxDir(fork)))
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
