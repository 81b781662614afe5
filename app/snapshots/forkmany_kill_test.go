package snapshots_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/providers"
)

// forkLeftovers are the folders, disk images and mounts under the local
// backend's root named for a fork being made (boxes/.fork-*, disks/.fork-*).
func forkLeftovers(t *testing.T, root string) []string {
	t.Helper()
	var left []string
	for _, d := range []string{"boxes", "disks"} {
		m, err := filepath.Glob(filepath.Join(root, d, ".fork-*"))
		if err != nil {
			t.Fatal(err)
		}
		left = append(left, m...)
	}
	mounts, _ := os.ReadFile("/proc/self/mounts")
	for _, line := range strings.Split(string(mounts), "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[1], root) && strings.Contains(f[1], "/.fork-") {
			left = append(left, "mount "+f[1])
		}
	}
	return left
}

// forksEndAfterRestart starts another worker on dsn and root, after the
// first was killed, and waits (two minutes at most) for each of the forks
// ops started to end; then no operation is left running or unknown. It
// answers each fork's operation as it ended, in ops' order.
func forksEndAfterRestart(t *testing.T, e *coretest.Env, pool *pgxpool.Pool, dsn, root string, ops []*snapshots.Operation) []*snapshots.Operation {
	t.Helper()
	startWorker(t, dsn, root, "", "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ended := make([]*snapshots.Operation, len(ops))
	for i, op := range ops {
		done, err := e.Core.Wait(ctx, op.ID)
		if err != nil {
			t.Fatal(err)
		}
		ended[i] = done
	}
	var running int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM operations WHERE state IN ('running', 'unknown')").Scan(&running); err != nil || running != 0 {
		t.Fatalf("%d operations still running (%v)", running, err)
	}
	return ended
}

// TestForkManyKilledMidFork kills the worker process (SIGKILL, as a crash)
// while the first of a fork into three is being written under its
// temporary name, then starts another worker: each fork ends whole (a
// ready box that reads its snapshot's files) or absent, no operation is
// left running, and after the local backend's next sweep nothing of the
// fork the kill cut short is left: no temporary folder, disk image or
// mount.
func TestForkManyKilledMidFork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, pool, dsn, root := coretest.WorkerCore(t, coretest.Options{})
	_, agent, _ := e.Thread(t, "Fork and crash")
	b := e.Box(t, agent, "amber-fox")
	dir := e.Local.BoxDir(providers.Guest{Ref: b.GuestRef})
	// Enough files that writing the forks' shared tree takes a while.
	for i := range 3000 {
		write(t, filepath.Join(dir, fmt.Sprintf("f%04d.txt", i)), strings.Repeat("x", 512+i))
	}
	write(t, filepath.Join(dir, "notes.txt"), "at the take")
	sn := e.AdmitReady(t, agent, "amber-fox", "one")

	ops, err := e.Forks.ForkMany(ctx, agent, fork.ForkManyRequest{Box: "amber-fox", Snapshot: sn.ID, Name: "fix", Count: 3})
	if err != nil {
		t.Fatal(err)
	}
	first := startWorker(t, dsn, root, "", "")
	// Stop the worker the moment a fork's temporary folder is there, so
	// the kill lands inside the backend's fork.
	for deadline := time.Now().Add(time.Minute); ; {
		if len(forkLeftovers(t, root)) > 0 {
			_ = first.Cmd.Process.Signal(syscall.SIGSTOP)
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(first.Log)
			t.Fatalf("no fork began within a minute; the worker's log:\n%s", log)
		}
		time.Sleep(time.Millisecond)
	}
	cut := forkLeftovers(t, root)
	first.Kill()
	if len(cut) == 0 {
		t.Fatal("the worker was stopped after its fork left its temporary name: the kill missed the fork")
	}
	coretest.WaitNoAdvisoryLocks(t, pool)

	for _, done := range forksEndAfterRestart(t, e, pool, dsn, root, ops) {
		p, _ := e.Forks.Kinds().Fork.Params(done)
		switch done.State {
		case snapshots.OpDone:
			res, err := e.Forks.Kinds().Fork.Result(done)
			if err != nil {
				t.Fatal(err)
			}
			fb, err := e.Core.Box(ctx, agent, res.Box)
			if err != nil || fb.State != snapshots.BoxReady {
				t.Fatalf("%s is done, its box %+v (%v)", p.Name, fb, err)
			}
			if got := read(t, filepath.Join(e.Local.BoxDir(providers.Guest{Ref: fb.GuestRef}), "notes.txt")); got != "at the take" {
				t.Fatalf("%s holds notes.txt %q", p.Name, got)
			}
		case snapshots.OpFailed:
			if _, err := e.Core.Box(ctx, agent, p.Name); err == nil {
				t.Fatalf("%s failed (%s) and its box is there", p.Name, coretest.Deref(done.Error))
			}
		default:
			t.Fatalf("%s ended %s at %s: %s (%s)", p.Name, done.State, done.Step, coretest.Deref(done.Error), coretest.Deref(done.Observed))
		}
	}

	if _, err := e.Local.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if left := forkLeftovers(t, root); len(left) != 0 {
		t.Fatalf("after the sweep, the fork the kill cut short (%q) left %q", cut, left)
	}
}

// ForkSnapshot stops as the stall says, before or after the backend's
// fork ("before:fork", "after:fork").
func (s *stallBackend) ForkSnapshot(ctx context.Context, ref providers.SnapshotRef, box providers.BoxIdentity, rec providers.Recorder) (providers.Guest, error) {
	s.point("before", "fork")
	g, err := s.Backend.ForkSnapshot(ctx, ref, box, rec)
	s.point("after", "fork")
	return g, err
}

// TestForkManyKilledAroundTheBackendsFork kills the worker process just
// before the backend's fork of the first of a fork into three, and just
// after it (its guest made, its box not yet recorded), then starts
// another: each fork ends whole, with the snapshot's files, no operation
// is left running, each new box has one guest, and nothing is left under
// a fork's temporary name after the next sweep.
func TestForkManyKilledAroundTheBackendsFork(t *testing.T) {
	t.Parallel()
	for _, stall := range []string{"before:fork", "after:fork"} {
		t.Run(stall, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e, pool, dsn, root := coretest.WorkerCore(t, coretest.Options{})
			_, agent, _ := e.Thread(t, "Fork and crash")
			b := e.Box(t, agent, "amber-fox")
			write(t, filepath.Join(e.Local.BoxDir(providers.Guest{Ref: b.GuestRef}), "notes.txt"), "at the take")
			sn := e.AdmitReady(t, agent, "amber-fox", "one")
			ops, err := e.Forks.ForkMany(ctx, agent, fork.ForkManyRequest{Box: "amber-fox", Snapshot: sn.ID, Name: "fix", Count: 3})
			if err != nil {
				t.Fatal(err)
			}
			marker := filepath.Join(t.TempDir(), "stalled")
			first := startWorker(t, dsn, root, stall, marker)
			first.WaitFile(t, marker)
			first.Kill()
			coretest.WaitNoAdvisoryLocks(t, pool)

			for _, done := range forksEndAfterRestart(t, e, pool, dsn, root, ops) {
				p, _ := e.Forks.Kinds().Fork.Params(done)
				if done.State != snapshots.OpDone {
					t.Fatalf("%s ended %s at %s: %s (%s)", p.Name, done.State, done.Step, coretest.Deref(done.Error), coretest.Deref(done.Observed))
				}
				fb, err := e.Core.Box(ctx, agent, p.Name)
				if err != nil || fb.State != snapshots.BoxReady || fb.GuestRef != p.BoxID {
					t.Fatalf("%s is done, its box %+v (%v)", p.Name, fb, err)
				}
				if got := read(t, filepath.Join(e.Local.BoxDir(providers.Guest{Ref: fb.GuestRef}), "notes.txt")); got != "at the take" {
					t.Fatalf("%s holds notes.txt %q", p.Name, got)
				}
			}
			entries, err := os.ReadDir(filepath.Join(root, "boxes"))
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 4 {
				var names []string
				for _, d := range entries {
					names = append(names, d.Name())
				}
				t.Fatalf("the box folders are %q, want amber-fox's and three forks'", names)
			}
			if _, err := e.Local.Sweep(ctx); err != nil {
				t.Fatal(err)
			}
			if left := forkLeftovers(t, root); len(left) != 0 {
				t.Fatalf("after the sweep, the forks left %q", left)
			}
		})
	}
}
