package boot

import (
	"context"
	"log/slog"
	"os"

	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/app/demo"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers/docker"
	"github.com/boxsnap/boxsnap/providers/local"
)

// startLocalBoxes starts again the processes of the local boxes that were
// running when boxsnap stopped (they are its children), and seeds the demo
// when asked. It runs where the workers run: a local box's process belongs
// to the process that runs its operations.
func startLocalBoxes(ctx context.Context, cfg config.Config, core *snapshots.Service, bes []snapshots.Backend, logger *slog.Logger) {
	if cfg.Demo {
		for _, b := range bes {
			if b.ID == DemoProxmoxID {
				if err := demo.SeedProxmox(ctx, core, b.ID, logger); err != nil {
					logger.Warn("demo: seeding the simulated Proxmox stopped", "err", err)
				}
			}
			if db, ok := b.Snap.(*docker.Backend); ok {
				if err := demo.SeedDocker(ctx, core, db, "/bin/busybox", logger); err != nil {
					logger.Warn("demo: seeding Docker stopped", "err", err)
				}
			}
		}
	}
	for _, b := range bes {
		lb, ok := b.Snap.(*local.Backend)
		if !ok {
			continue
		}
		// Content a take cut short by a crash wrote and no snapshot names
		// is freed, in the background.
		go func() {
			if freed, err := lb.Sweep(context.WithoutCancel(ctx)); err != nil {
				logger.Warn("local backend: sweep at start", "err", err)
			} else if freed > 0 {
				logger.Info("local backend: freed content no snapshot uses", "bytes", freed)
			}
		}()
		if started, err := lb.RestartRunning(ctx); err != nil {
			logger.Warn("start the local boxes' processes again", "err", err)
		} else if len(started) > 0 {
			logger.Info("started the local boxes' processes again", "boxes", started)
		}
		if !cfg.Demo {
			continue
		}
		self, err := os.Executable()
		if err != nil {
			logger.Warn("demo: cannot find the boxsnap binary", "err", err)
			continue
		}
		if err := demo.Seed(ctx, core, lb, b.ID, self, logger); err != nil {
			logger.Warn("demo: seeding stopped", "err", err)
		}
	}
}
