package proxmox_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
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
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/proxmox"
)

// A worker process: this test binary started again with these variables
// runs a boxsnap worker (the core, River's workers, the local backend and
// the Proxmox backend on the test's simulator) as `boxsnap work` does,
// until the test kills it with SIGKILL.
const (
	workerEnv  = "BOXSNAP_PVE_WORKER"
	workerDSN  = "BOXSNAP_PVE_DSN"
	workerURL  = "BOXSNAP_PVE_URL"
	workerCA   = "BOXSNAP_PVE_CA"
	workerRoot = "BOXSNAP_PVE_ROOT"
	workerZFS  = "BOXSNAP_PVE_ZFS" // set: the ZFS order's switch is on
	// workerScreens, set to a file, gives the worker's core a picture
	// taker that draws a screen and adds a line to that file each time.
	workerScreens = "BOXSNAP_PVE_SCREENS"
)

func runWorkerProcess() int {
	ctx := context.Background()
	// A worker needs room for its operations beside River's own
	// connections (jobs.MinPoolConnections); pgxpool's default is 4.
	pool, err := pgxpool.New(ctx, os.Getenv(workerDSN)+" pool_max_conns=12")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	be, err := proxmox.New(proxmox.Config{ID: "pve-lab", URL: os.Getenv(workerURL), TokenID: tokenID, TokenSecret: tokenSecret,
		CAFile: os.Getenv(workerCA), Install: install, PollEvery: 10 * time.Millisecond, Logger: logger,
		ZFSOrderForLiveChecksOnly: os.Getenv(workerZFS) != ""})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	e, err := coretest.Build(ctx, pool, coretest.Options{LocalRoot: os.Getenv(workerRoot), Logger: logger,
		Extra: []snapshots.Backend{{ID: "pve-lab", Kind: "proxmox", Label: "pve-lab", Snap: be, Boxes: be}}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if f := os.Getenv(workerScreens); f != "" {
		e.Pictures.Use(drawnScreen{file: f})
	}
	if _, err := e.Core.Recover(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	select {} // until killed
}

type worker struct {
	cmd *exec.Cmd
	log string
}

func startWorker(t *testing.T, e *simEnv, dsn, root string, env ...string) *worker {
	t.Helper()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	must(t, os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: e.sim.Certificate()}), 0o600))
	logFile := filepath.Join(dir, "worker.log")
	out, err := os.Create(logFile)
	must(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), workerEnv+"=1", workerDSN+"="+dsn, workerURL+"="+e.url, workerCA+"="+ca, workerRoot+"="+root)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = out, out
	must(t, cmd.Start())
	w := &worker{cmd: cmd, log: logFile}
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

// TestRestartRecoveryProxmox: the worker process is killed after the stop,
// after the undo and after the rollback of a restore on Proxmox (each while
// the job snoozes on the next step's running Proxmox task, recorded on the
// operation); a new worker finishes each restore from the task it reached,
// starting none again, or says it could not confirm, naming the step; no pin
// is left.
func TestRestartRecoveryProxmox(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, after string
		step        providers.RestoreStep
		slow        string // the task type that runs when the worker is killed (stalled until then)
	}{
		{"AfterTheStop", "the stop", providers.StepUndo, "vzsnapshot"},
		{"AfterTheUndo", "the undo", providers.StepRollback, "vzrollback"},
		{"AfterTheRollback", "the rollback", providers.StepStart, "vzstart"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newSim(t, simOpts{})
			// This process admits; the worker processes run.
			env, _, dsn, root := workerCore(t, e)
			ctx := context.Background()
			w := startWorker(t, e, dsn, root)
			adopt(t, env, "amber-fox", proxmox.KindLXC, lxcThin)
			must(t, e.sim.Write(lxcThin, gib))
			target := takeDone(t, env, snapshots.Owner(), "amber-fox", "target")
			atTarget := written(t, e, lxcThin)
			must(t, e.sim.Write(lxcThin, 2*gib))
			before := tasksOf(t, e, lxcThin)
			// The step's task runs until the worker has been killed during it.
			e.sim.StallNextTask(c.slow, lxcThin)

			op, err := env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "amber-fox", Snapshot: target.ID})
			must(t, err)
			var upid string
			waitFor(t, "the restore at "+string(c.step)+" with its task", func() bool {
				got, err := env.Core.Operation(ctx, snapshots.Owner(), op.ID)
				must(t, err)
				var task providers.TaskRef
				_ = json.Unmarshal(got.Task, &task)
				upid = task.ID
				return got.Step == string(c.step) && got.TaskWaiting && strings.Contains(task.ID, ":"+c.slow+":") && taskRunning(t, e, task.ID)
			})
			w.kill()
			startWorker(t, e, dsn, root) // recovers at start
			must(t, e.sim.FinishTask(upid))
			got := env.Wait(t, op)
			t.Logf("after a kill %s the restore settled %s at %s", c.after, got.State, got.Step)
			switch got.State {
			case snapshots.OpDone:
				if n := written(t, e, lxcThin); n != atTarget {
					t.Fatalf("restored after a kill %s: %d written, want %d", c.after, n, atTarget)
				}
				if g, _ := e.sim.Guest(lxcThin); !g.Running || g.Lock != "" {
					t.Fatalf("after the resumed restore: running %v lock %q", g.Running, g.Lock)
				}
				if n := tasksOf(t, e, lxcThin)[c.slow] - before[c.slow]; n != 1 {
					t.Fatalf("Proxmox ran %d %s tasks for the restore, want 1: the resume started its step again", n, c.slow)
				}
			case snapshots.OpUnknown:
				if w := snapshots.UnknownWords("amber-fox", got); !strings.Contains(w, "could not confirm the restore of amber-fox: it was") {
					t.Fatalf("unknown without the words: %q", w)
				}
			default:
				log, _ := os.ReadFile(w.log)
				t.Fatalf("after a kill %s: %s %q %q\n%s", c.after, got.State, deref(got.Error), deref(got.Observed), log)
			}
			if got.State == snapshots.OpDone {
				for _, id := range append([]string{target.ID}, got.Snapshots...) {
					if n := pinned(t, env, id); n != 0 {
						t.Fatalf("%s still pinned by %d operations", id, n)
					}
				}
			}
		})
	}
}
