package docker_test

import (
	"context"
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
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers/docker"
	"github.com/boxsnap/boxsnap/providers/docker/dockertest"
)

// A worker process: this test binary started again with these variables
// runs a boxsnap worker (the core, River's workers, the local backend and
// the Docker backend on the test's daemon, its state folder beside the
// local root, kept from one worker to the next) until the test kills it. With
// workerStall set, the backend writes workerMarker and waits at that point
// of a take or a restore, for the kill.
const (
	workerEnv    = "BOXSNAP_DOCKER_WORKER"
	workerDSN    = "BOXSNAP_DOCKER_DSN"
	workerRoot   = "BOXSNAP_DOCKER_ROOT"
	workerStall  = "BOXSNAP_DOCKER_STALL"
	workerMarker = "BOXSNAP_DOCKER_MARKER"
	workerState  = "BOXSNAP_DOCKER_STATE"
	hostEnv      = "BOXSNAP_TEST_DOCKER_HOST"
)

func dockerBackend(t testing.TB, b *docker.Backend) snapshots.Backend {
	return snapshots.Backend{ID: b.ID(), Kind: "docker", Label: "Docker", Snap: b, Boxes: b}
}

func runWorkerProcess() int {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv(workerDSN)+" pool_max_conns=12")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	stall, marker := os.Getenv(workerStall), os.Getenv(workerMarker)
	be, err := docker.New(docker.Config{ID: "docker", Host: os.Getenv(hostEnv), Install: install, Network: "none", CopierBinary: dockertest.Busybox,
		StateDir: os.Getenv(workerState), Logger: logger, Hook: func(point string) {
			if point == stall {
				_ = os.WriteFile(marker, []byte(point), 0o600)
				select {} // until killed
			}
		}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	e, err := coretest.Build(ctx, pool, coretest.Options{LocalRoot: os.Getenv(workerRoot), Logger: logger,
		Extra: []snapshots.Backend{{ID: "docker", Kind: "docker", Label: "Docker", Snap: be, Boxes: be}}})
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

func startWorker(t *testing.T, dsn, root, stall string) *worker {
	t.Helper()
	dir := t.TempDir()
	w := &worker{log: filepath.Join(dir, "worker.log"), marker: filepath.Join(dir, "stalled")}
	out, err := os.Create(w.log)
	must(t, err)
	w.cmd = exec.Command(os.Args[0], "-test.run=^$")
	w.cmd.Env = append(os.Environ(), workerEnv+"=1", workerDSN+"="+dsn, workerRoot+"="+root, hostEnv+"="+dockertest.Host(t),
		workerStall+"="+stall, workerMarker+"="+w.marker, workerState+"="+filepath.Clean(root)+"-docker-state")
	w.cmd.Stdout, w.cmd.Stderr = out, out
	must(t, w.cmd.Start())
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
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := os.Stat(w.marker); err == nil {
			return
		}
		if w.cmd.ProcessState != nil || time.Now().After(deadline) {
			log, _ := os.ReadFile(w.log)
			t.Fatalf("the worker never reached its stall point:\n%s", log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// coreEnv is a core that admits and reads (no workers) on a fresh database,
// with the Docker backend beside the local one.
func coreEnv(t *testing.T, b *docker.Backend, workers bool, install string) (*coretest.Env, string, string) {
	t.Helper()
	ctx := context.Background()
	dsn := dbtest.NewDSN(t)
	pool, err := pgxpool.New(ctx, dsn+" pool_max_conns=12")
	must(t, err)
	t.Cleanup(pool.Close)
	root := t.TempDir()
	// The trash is off: these tests release as a release that deletes.
	env, err := coretest.Build(ctx, pool, coretest.Options{Install: install, LocalRoot: root, NoWorkers: !workers, NoTrash: true, Extra: []snapshots.Backend{dockerBackend(t, b)}})
	must(t, err)
	t.Cleanup(env.Stop)
	if env.Install != install {
		t.Fatalf("install %s, want %s", env.Install, install)
	}
	// The test daemon's data root is this machine's disk, which other work
	// fills: takes are let go up to the highest room setting.
	st, err := env.Core.Settings(ctx)
	must(t, err)
	st.RoomPercent = snapshots.MaxRoomPercent
	must(t, env.Core.SaveSettings(ctx, snapshots.Owner(), st))
	return env, dsn, root
}

// dockerBox makes a Docker box through the core.
func dockerBox(t *testing.T, env *coretest.Env, b *docker.Backend, name string) *snapshots.Box {
	t.Helper()
	box, err := env.Boxes.AcquireBox(context.Background(), snapshots.Owner(), snapshots.BoxRequest{Name: name, Kind: docker.KindLinux,
		Backend: b.ID(), Template: dockertest.TestImage})
	must(t, err)
	t.Cleanup(func() {
		_ = b.Release(context.Background(), guestOf(box))
	})
	return box
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func isUnknownWords(s string) bool { return strings.Contains(s, "could not confirm") }
