package hosts_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

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

// carryKillEnv holds, in a child test process, the host process that
// TestCarryKilled runs and that dies mid-carry (a carryKill as JSON).
const carryKillEnv = "BOXSNAP_TEST_CARRY_KILLED"

// carryKill is a move or a takeover onto Host a child process asks and
// is killed in.
type carryKill struct {
	DSN, Root, Box, Host, How string
	Bucket                    objstore.Config
}

// storedHost starts a core on pool as host, on the local folder root, its
// snapshots in the bucket cfg.
func storedHost(t *testing.T, pool *pgxpool.Pool, cfg objstore.Config, host, root string, workers bool) *coretest.Env {
	t.Helper()
	bucket, err := objstore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := local.Passable(root, os.TempDir()); err != nil {
		t.Fatal(err)
	}
	e, err := coretest.Build(context.Background(), pool, coretest.Options{Host: host, LocalRoot: root, NoWorkers: !workers,
		ContentStore: &ship.Remote{Objects: bucket, Keys: bucket.Config()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Stop)
	return e
}

// poolOf is a pool on the database dsn, with connections enough for a
// process's workers.
func poolOf(t *testing.T, dsn string) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 12
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// dyingRestorer kills its process (SIGKILL, as a crash) when asked to
// admit a restore: a move or a takeover has made the box's guest on this
// host and made this host its owner, and the restore that carries the box
// over is not admitted yet.
type dyingRestorer struct{}

func (dyingRestorer) Restore(context.Context, snapshots.Caller, snapshots.RestoreRequest) (*snapshots.Operation, error) {
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// TestCarryKilled is not a test of its own: it is the host process that
// TestAMoveOrATakeoverKilledBeforeItsRestore runs and that dies part-way.
func TestCarryKilled(t *testing.T) {
	at := os.Getenv(carryKillEnv)
	if at == "" {
		t.Skip("the host process TestAMoveOrATakeoverKilledBeforeItsRestore runs and kills")
	}
	var k carryKill
	if err := json.Unmarshal([]byte(at), &k); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	e := storedHost(t, poolOf(t, k.DSN), k.Bucket, k.Host, k.Root, false)
	var err error
	e.Hosts.UseRestorer(dyingRestorer{})
	if k.How == "move" {
		_, err = e.Hosts.Move(ctx, snapshots.Owner(), k.Box, k.Host)
	} else {
		if _, err = e.Hosts.MarkGone(ctx, snapshots.Owner(), "host-a"); err == nil {
			_, err = e.Hosts.TakeOver(ctx, snapshots.Owner(), "host-a", "")
		}
	}
	t.Fatalf("the %s returned (%v): its process was to die before the restore", k.How, err)
}

// TestAMoveOrATakeoverKilledBeforeItsRestore kills host-b's process
// (SIGKILL) once a move or a takeover of host-a's box onto host-b has made
// the box's guest there and made host-b its owner, before it admits the
// restore that carries the box over: the same move or takeover, asked
// again on host-b, carries the box over whole, and the box belongs to
// host-b alone.
func TestAMoveOrATakeoverKilledBeforeItsRestore(t *testing.T) {
	for _, how := range []string{"move", "takeover"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			cfg := s3test.Start(t).Bucket(t)
			dsn := dbtest.NewDSN(t)
			pool := poolOf(t, dsn)
			a := storedHost(t, pool, cfg, "host-a", t.TempDir(), true)
			box := a.Box(t, snapshots.Owner(), "amber-fox")
			if err := os.WriteFile(filepath.Join(a.Local.BoxDir(providers.Guest{Ref: box.GuestRef}), "notes.txt"), []byte("on host-a"), 0o644); err != nil {
				t.Fatal(err)
			}
			a.TakeReady(t, snapshots.Owner(), "amber-fox", "last")
			if how == "takeover" {
				a.Stop()
				if _, err := pool.Exec(ctx, "UPDATE hosts SET last_seen_at = now() - $1::interval WHERE name = 'host-a'",
					fmt.Sprintf("%d seconds", int((hosts.SeenAliveFor+time.Minute).Seconds()))); err != nil {
					t.Fatal(err)
				}
			}

			rootB := t.TempDir()
			k, _ := json.Marshal(carryKill{DSN: dsn, Root: rootB, Box: "amber-fox", Host: "host-b", How: how, Bucket: cfg})
			child := exec.Command(os.Args[0], "-test.run=^TestCarryKilled$", "-test.count=1", "-test.v")
			child.Env = append(os.Environ(), carryKillEnv+"="+string(k))
			out, err := child.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("host-b's process was not killed mid-%s (%v):\n%s", how, err, out)
			}
			t.Cleanup(func() { _ = local.UnmountAll(rootB) })

			// host-b's process again, and the same ask.
			b := storedHost(t, pool, cfg, "host-b", rootB, true)
			var op *snapshots.Operation
			if how == "move" {
				op, err = b.Hosts.Move(ctx, snapshots.Owner(), "amber-fox", "host-b")
			} else {
				var res *hosts.TakeOverResult
				res, err = b.Hosts.TakeOver(ctx, snapshots.Owner(), "host-a", "")
				if err == nil && len(res.Taken) == 1 {
					op = &snapshots.Operation{ID: res.Taken[0].Operation}
				} else if err == nil {
					t.Fatalf("the takeover asked again took %+v, left %+v", res.Taken, res.Left)
				}
			}
			if err != nil {
				t.Fatalf("the %s asked again after one killed before its restore: %v", how, err)
			}
			if got := b.Wait(t, op); got.State != snapshots.OpDone {
				t.Fatalf("the %s's restore asked again: %s %s", how, got.State, coretest.Deref(got.Error))
			}
			if data, err := os.ReadFile(filepath.Join(b.Local.BoxDir(providers.Guest{Ref: box.GuestRef}), "notes.txt")); string(data) != "on host-a" {
				t.Fatalf("on host-b after the %s asked again: %q %v", how, data, err)
			}
			if got := ownerOf(t, pool, "amber-fox"); got != "host-b" {
				t.Fatalf("after the %s, amber-fox belongs to %q", how, got)
			}
		})
	}
}
