package hosts_test

import (
	"context"
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

func TestRestoreOnAnotherHost(t *testing.T) {
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
	a, b := mk("host-a"), mk("host-b")
	box := a.Box(t, snapshots.Owner(), "amber-fox")
	if err := os.WriteFile(filepath.Join(a.Local.BoxDir(providers.Guest{Ref: box.GuestRef}), "notes.txt"), []byte("on host-a"), 0o644); err != nil {
		t.Fatal(err)
	}
	a.TakeReady(t, snapshots.Owner(), "amber-fox", "one")
	op, err := b.Hosts.Move(context.Background(), snapshots.Owner(), "amber-fox", "host-b")
	if err != nil {
		t.Fatalf("move: %v", err)
	}
	got := b.Wait(t, op)
	if got.State != snapshots.OpDone {
		t.Fatalf("move's restore: %s %s %s", got.State, coretest.Deref(got.Error), coretest.Deref(got.Observed))
	}
	data, err := os.ReadFile(filepath.Join(b.Local.BoxDir(providers.Guest{Ref: box.GuestRef}), "notes.txt"))
	if string(data) != "on host-a" {
		t.Fatalf("on host-b: %q %v", data, err)
	}
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
