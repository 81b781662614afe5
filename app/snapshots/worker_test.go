package snapshots_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/jobs"
	"github.com/boxsnap/boxsnap/providers"
)

// Worker processes: the test binary started again with these variables runs
// a boxsnap worker (the core, River's workers, the local backend) on the
// test's database and folder, as `boxsnap work` does, until it is killed.
const (
	workerEnv    = "BOXSNAP_TEST_WORKER"
	workerDSN    = "BOXSNAP_TEST_DSN"
	workerRoot   = "BOXSNAP_TEST_ROOT"
	workerStall  = "BOXSNAP_TEST_STALL"  // "before:rollback", "after:snapshot", ...
	workerMarker = "BOXSNAP_TEST_MARKER" // a file the worker writes when it stalls
	// workerRecover is the worker's recover interval ("1s"; empty: the
	// default), workerReady a file it writes once it works.
	workerRecover = "BOXSNAP_TEST_RECOVER"
	workerReady   = "BOXSNAP_TEST_READY"
)

func runWorkerProcess() int {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(os.Getenv(workerDSN))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg.MaxConns = 12 // as dbtest's pools: four operations at once beside River's own
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	stall, marker := os.Getenv(workerStall), os.Getenv(workerMarker)
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var every jobs.Intervals
	if v := os.Getenv(workerRecover); v != "" {
		if every.Recover, err = time.ParseDuration(v); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	e, err := coretest.Build(ctx, pool, coretest.Options{LocalRoot: os.Getenv(workerRoot), Logger: logger, Intervals: every,
		Wrap: func(b snapshots.Backend) snapshots.Backend {
			if stall != "" {
				b.Snap = &stallBackend{Backend: b.Snap, at: stall, marker: marker}
			}
			return b
		}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := e.Core.Recover(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	if ready := os.Getenv(workerReady); ready != "" {
		_ = os.WriteFile(ready, []byte(e.Jobs.WorkerID()), 0o644)
	}
	select {} // until killed
}

// stallBackend stops forever before or after one backend call, after writing
// its marker, so the test can kill the process exactly there.
type stallBackend struct {
	providers.Backend
	at     string // "before:<step>" or "after:<step>"
	marker string
}

func (s *stallBackend) point(when, step string) {
	if s.at == when+":"+step {
		_ = os.WriteFile(s.marker, []byte(s.at), 0o644)
		select {}
	}
}

func (s *stallBackend) Snapshot(ctx context.Context, g providers.Guest, take providers.SnapshotTake, rec providers.Recorder) (providers.SnapshotTaken, error) {
	s.point("before", "snapshot")
	t, err := s.Backend.Snapshot(ctx, g, take, rec)
	s.point("after", "snapshot")
	return t, err
}

func (s *stallBackend) RestoreSnapshot(ctx context.Context, g providers.Guest, ref providers.SnapshotRef, step providers.RestoreStep, rec providers.Recorder) (providers.RestoreProgress, error) {
	s.point("before", string(step))
	p, err := s.Backend.RestoreSnapshot(ctx, g, ref, step, rec)
	s.point("after", string(step))
	return p, err
}

func (s *stallBackend) DeleteSnapshot(ctx context.Context, ref providers.SnapshotRef, rec providers.Recorder) error {
	s.point("before", "delete")
	err := s.Backend.DeleteSnapshot(ctx, ref, rec)
	s.point("after", "delete")
	return err
}

// startWorker starts a worker process on dsn and root, stalling at stall
// ("" for none).
func startWorker(t *testing.T, dsn, root, stall, marker string) *coretest.Worker {
	t.Helper()
	return startWorkerEnv(t, dsn, root, stall, marker)
}

// startWorkerEnv is startWorker with more of the worker's variables
// (workerRecover, workerReady), each "NAME=value".
func startWorkerEnv(t *testing.T, dsn, root, stall, marker string, env ...string) *coretest.Worker {
	t.Helper()
	return coretest.StartWorker(t, append([]string{workerEnv + "=1", workerDSN + "=" + dsn, workerRoot + "=" + root,
		workerStall + "=" + stall, workerMarker + "=" + marker}, env...)...)
}
