package contents_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// Worker processes: the test binary started again with these variables runs
// a boxsnap worker (the core, Contents, River's workers, the local backend)
// on the test's database and folder, as `boxsnap work` does, until it is
// killed. The import's crash test kills one just after the backend
// published.
const (
	workerEnv    = "BOXSNAP_TEST_WORKER"
	workerDSN    = "BOXSNAP_TEST_DSN"
	workerRoot   = "BOXSNAP_TEST_ROOT"
	workerStall  = "BOXSNAP_TEST_STALL"  // "after:import" or ""
	workerMarker = "BOXSNAP_TEST_MARKER" // a file the worker writes when it stalls
)

// runWorkerProcess runs the worker the variables above describe.
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
	e, err := coretest.Build(ctx, pool, coretest.Options{LocalRoot: os.Getenv(workerRoot), Logger: logger,
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
	select {} // until killed
}

// stallBackend stops forever before or after the import's publish, after
// writing its marker, so the test can kill the process exactly there; its
// export is the backend's it wraps.
type stallBackend struct {
	providers.Backend
	at     string // "before:import" or "after:import"
	marker string
}

func (s *stallBackend) point(when string) {
	if s.at == when+":import" {
		_ = os.WriteFile(s.marker, []byte(s.at), 0o644)
		select {}
	}
}

func (s *stallBackend) Scrub(ctx context.Context, ref providers.SnapshotRef, sec providers.Secrets) (*providers.ScrubReport, error) {
	return s.Backend.(providers.Exporter).Scrub(ctx, ref, sec)
}

func (s *stallBackend) ExportSnapshot(ctx context.Context, ref providers.SnapshotRef, opts providers.ExportOptions, w io.Writer) error {
	return s.Backend.(providers.Exporter).ExportSnapshot(ctx, ref, opts, w)
}

func (s *stallBackend) ImportSnapshots(ctx context.Context, opts providers.ImportOptions, archives []io.Reader) ([]providers.ImportedSnapshot, error) {
	s.point("before")
	got, err := s.Backend.(providers.Exporter).ImportSnapshots(ctx, opts, archives)
	s.point("after")
	return got, err
}

// startWorker starts a worker process on dsn and root, stalling at stall
// ("" for none).
func startWorker(t *testing.T, dsn, root, stall, marker string) *coretest.Worker {
	t.Helper()
	return coretest.StartWorker(t, workerEnv+"=1", workerDSN+"="+dsn, workerRoot+"="+root, workerStall+"="+stall, workerMarker+"="+marker)
}
