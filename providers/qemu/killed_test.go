package qemu_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/qemu"
	"github.com/boxsnap/boxsnap/providers/qemu/qemutest"
)

// A worker process: this test binary started again with these variables
// runs a boxsnap worker (the core, River's workers, the local backend and
// the QEMU backend on the test's libvirtd, its boxes in the test's folder)
// until the test kills it. With workerStall set, the backend writes
// workerMarker and waits at that point of a take or a restore, for the
// kill.
const (
	workerEnv    = "BOXSNAP_QEMU_WORKER"
	workerDSN    = "BOXSNAP_QEMU_DSN"
	workerRoot   = "BOXSNAP_QEMU_ROOT"
	workerConfig = "BOXSNAP_QEMU_CONFIG"
	workerStall  = "BOXSNAP_QEMU_STALL"
	workerMarker = "BOXSNAP_QEMU_MARKER"
)

// workerCfg is what a worker process is told of the test's backend.
type workerCfg struct {
	Socket    string
	Dir       string
	Templates map[string]qemu.Template
}

func runWorkerProcess() int {
	ctx := context.Background()
	var wc workerCfg
	if err := json.Unmarshal([]byte(os.Getenv(workerConfig)), &wc); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	pool, err := pgxpool.New(ctx, os.Getenv(workerDSN)+" pool_max_conns=12")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	stall, marker := os.Getenv(workerStall), os.Getenv(workerMarker)
	be, err := qemu.New(qemu.Config{ID: "qemu-test", Socket: wc.Socket, Install: "intest", Dir: wc.Dir, Templates: wc.Templates, Logger: logger,
		Hook: func(point string) {
			if point == stall {
				_ = os.WriteFile(marker, []byte(point), 0o600)
				select {} // until killed
			}
		}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	e, err := coretest.Build(ctx, pool, coretest.Options{Install: "intest", LocalRoot: os.Getenv(workerRoot), Logger: logger, NoTrash: true,
		Extra: []snapshots.Backend{{ID: be.ID(), Kind: "qemu", Label: be.ID(), Snap: be, Boxes: be}}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := e.Core.Recover(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	select {} // until killed
}

type worker struct {
	cmd    *exec.Cmd
	log    string
	marker string
}

// startWorker starts a worker process on the test's database and backend,
// which waits at stall (none when empty) for its kill.
func startWorker(t *testing.T, dsn, root string, cfg qemu.Config, stall string) *worker {
	t.Helper()
	dir := t.TempDir()
	w := &worker{log: filepath.Join(dir, "worker.log"), marker: filepath.Join(dir, "stalled")}
	out, err := os.Create(w.log)
	if err != nil {
		t.Fatal(err)
	}
	wc, err := json.Marshal(workerCfg{Socket: cfg.Socket, Dir: cfg.Dir, Templates: cfg.Templates})
	if err != nil {
		t.Fatal(err)
	}
	w.cmd = exec.Command(os.Args[0], "-test.run=^$")
	w.cmd.Env = append(os.Environ(), workerEnv+"=1", workerDSN+"="+dsn, workerRoot+"="+root, workerConfig+"="+string(wc),
		workerStall+"="+stall, workerMarker+"="+w.marker)
	w.cmd.Stdout, w.cmd.Stderr = out, out
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.kill)
	return w
}

// kill kills the worker as a crash would: SIGKILL, no clean-up.
func (w *worker) kill() {
	if w.cmd.ProcessState != nil {
		return
	}
	_ = w.cmd.Process.Signal(syscall.SIGKILL)
	_ = w.cmd.Wait()
}

// waitStalled waits until the worker reached its stall point.
func (w *worker) waitStalled(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(bootWait)
	for {
		if _, err := os.Stat(w.marker); err == nil {
			return
		}
		if w.cmd.ProcessState != nil || time.Now().After(deadline) {
			log, _ := os.ReadFile(w.log)
			t.Fatalf("the worker never reached its stall point:\n%s", log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRestoreKilledWorkerOnQEMU: the worker process running a restore on a
// real QEMU guest is killed (SIGKILL, as a crash) at each step of the
// memory order and of the disk order, after the stop and before the undo's
// take, and in its undo's take; another worker resumes it, and the
// restore ends done: the guest runs, holding what the snapshot holds, and
// its undo brings back what it replaced.
func TestRestoreKilledWorkerOnQEMU(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, cfg := newBackendConfig(t)
	env, dsn, root := workerCore(t, b)
	box, g := bootedBox(t, env, b, "killed-owl")

	first := startWorker(t, dsn, root, cfg, "")
	targets := map[bool]string{}
	for _, memory := range []bool{false, true} {
		sh(t, b, g, fmt.Sprintf("printf 'target %v' > /root/state && sync", memory))
		op, sn, err := env.Take.Take(ctx, snapshots.Owner(), taking.TakeRequest{Box: box.Name, Name: fmt.Sprintf("memory %v", memory), Memory: memory})
		if err != nil {
			t.Fatalf("take: %v", err)
		}
		if got := waitOp(t, env, op.ID); got.State != snapshots.OpDone {
			t.Fatalf("take ended %s: %s", got.State, coretest.Deref(got.Error))
		}
		targets[memory] = sn.ID
	}
	first.kill()

	cases := []struct {
		memory bool
		stall  string
	}{
		// Each order stops the guest first: take:prepared is after the
		// stop and before the undo's take, take:taken in the undo.
		{true, "restore:stop"}, {true, "take:prepared"}, {true, "take:taken"},
		{true, "restore:rollback"}, {true, "restore:read-size"},
		{false, "restore:stop"}, {false, "take:prepared"}, {false, "take:taken"},
		{false, "restore:rollback"}, {false, "restore:start"}, {false, "restore:read-size"},
	}
	for _, c := range cases {
		running(t, b, g)
		before := fmt.Sprintf("changed before a restore killed at %s", c.stall)
		sh(t, b, g, "printf '"+before+"' > /root/state && sync")
		boots := len(qemutest.Boots(b.ConsoleLog(g)))
		w := startWorker(t, dsn, root, cfg, c.stall)
		op, err := env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: box.Name, Snapshot: targets[c.memory]})
		if err != nil {
			t.Fatalf("Restore: %v", err)
		}
		w.waitStalled(t)
		w.kill()
		next := startWorker(t, dsn, root, cfg, "")
		done := resumed(t, env, op.ID)
		if done.State != snapshots.OpDone {
			log, _ := os.ReadFile(next.log)
			t.Fatalf("a restore (memory %v) killed at %s ended %s at %s: %s (%s)\n%s", c.memory, c.stall, done.State, done.Step,
				coretest.Deref(done.Error), coretest.Deref(done.Observed), log)
		}
		if on, err := b.Runs(ctx, g); err != nil || !on {
			t.Fatalf("a restore (memory %v) killed at %s and resumed left the guest stopped (%v)", c.memory, c.stall, err)
		}
		if !c.memory {
			wctx, cancel := context.WithTimeout(ctx, bootWait)
			_, err := qemutest.WaitBoot(wctx, b.ConsoleLog(g), boots)
			cancel()
			if err != nil {
				t.Fatalf("a disk restore killed at %s and resumed: the guest's boot: %v", c.stall, err)
			}
		}
		if got := strings.TrimSpace(sh(t, b, g, "cat /root/state")); got != fmt.Sprintf("target %v", c.memory) {
			t.Fatalf("a restore (memory %v) killed at %s and resumed left the state %q", c.memory, c.stall, got)
		}
		if done.UndoID == nil {
			t.Fatalf("the restore killed at %s has no undo", c.stall)
		}
		undo, _, err := env.Core.Snapshot(ctx, snapshots.Owner(), *done.UndoID)
		if err != nil || undo.State != snapshots.StateReady {
			t.Fatalf("the undo of the restore killed at %s: %+v %v", c.stall, undo, err)
		}
		var read strings.Builder
		if _, err := b.ReadFile(ctx, providers.SnapshotRef{ID: undo.ID, Ref: undo.Ref, Guest: g}, "root/state", &read); err != nil || read.String() != before {
			t.Fatalf("the undo of the restore killed at %s holds %q (%v), want %q", c.stall, read.String(), err, before)
		}
		next.kill()
	}
}

// waitOp waits for an operation to end, up to a deadline a restore that
// boots the guest under TCG keeps.
func waitOp(t *testing.T, env *coretest.Env, id string) *snapshots.Operation {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*bootWait)
	defer cancel()
	op, err := env.Core.Wait(ctx, id)
	if err != nil {
		t.Fatalf("wait for %s: %v", id, err)
	}
	return op
}
