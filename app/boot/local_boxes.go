package boot

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/app/demo"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/jobs"
	"github.com/boxsnap/boxsnap/providers/docker"
	"github.com/boxsnap/boxsnap/providers/local"
	"github.com/boxsnap/boxsnap/providers/qemu"
)

// startLocalBoxes starts the processes of the local boxes marked running
// whose owner is gone (they are the children of the process that owns them,
// and end with it), now and at each recover interval until ctx ends, and
// seeds the demo when asked. It runs where the workers run: a local box's
// process belongs to a working process, whose presence lock says it lives
// (operations.Presence); one that died has its boxes taken over by a live
// one within the interval.
// unownedEvery is how often a working process looks for local boxes marked
// running with no owner.
const unownedEvery = time.Second

func startLocalBoxes(ctx context.Context, cfg config.Config, core *snapshots.Service, tk *take.Take, bx *boxes.Boxes, st *store.Store, bes []snapshots.Backend, logger *slog.Logger) {
	alive := func(ctx context.Context, owner string) (bool, error) { return st.WorkerAlive(ctx, st.Pool, owner) }
	if cfg.Demo {
		for _, b := range bes {
			if b.ID == DemoProxmoxID {
				if err := demo.SeedProxmox(ctx, bx, b.ID, logger); err != nil {
					logger.Warn("demo: seeding the simulated Proxmox stopped", "err", err)
				}
			}
			if qb, ok := b.Snap.(*qemu.Backend); ok && cfg.QEMUSocket == "" { // the demo's own (qemu.go)
				if err := demo.SeedQEMU(ctx, bx, qb, logger); err != nil {
					logger.Warn("demo: seeding QEMU stopped", "err", err)
				}
			}
			if db, ok := b.Snap.(*docker.Backend); ok {
				if err := demo.SeedDocker(ctx, bx, db, "/bin/busybox", logger); err != nil {
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
		takeOver := func(ctx context.Context, alive func(context.Context, string) (bool, error)) {
			if started, err := lb.TakeOver(ctx, alive); err != nil {
				logger.Warn("start the local boxes' processes again", "err", err)
			} else if len(started) > 0 {
				logger.Info("started the local boxes' processes again", "boxes", started, "owner", lb.Owner())
			}
		}
		takeOver(ctx, alive)
		if lb.Owner() != "" {
			go func() {
				// A box a web process marked running (it has no owner) is
				// started within a second; the owners are asked after at
				// each recover interval.
				every := cfg.Intervals.Recover
				if every <= 0 {
					every = jobs.RecoverInterval
				}
				t := time.NewTicker(min(every, unownedEvery))
				defer t.Stop()
				asked := time.Now()
				for {
					select {
					case <-ctx.Done():
						return
					case <-t.C:
					}
					if time.Since(asked) >= every {
						asked = time.Now()
						takeOver(ctx, alive)
					} else {
						takeOver(ctx, nil)
					}
				}
			}()
		}
		if !cfg.Demo {
			continue
		}
		self, err := os.Executable()
		if err != nil {
			logger.Warn("demo: cannot find the boxsnap binary", "err", err)
			continue
		}
		if err := demo.Seed(ctx, core, tk, bx, lb, b.ID, self, logger); err != nil {
			logger.Warn("demo: seeding stopped", "err", err)
		}
	}
}
