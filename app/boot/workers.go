package boot

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/jobs"
	"github.com/boxsnap/boxsnap/providers/local"
)

// workers is the process's River client and the local backends whose boxes'
// processes it owns.
type workers struct {
	cfg    config.Config
	client *jobs.Client
	base   *base
	logger *slog.Logger
}

// startJobs makes River's client and, when this process works, starts its
// workers, recovers operations cut short, starts the local boxes it owns
// and reconciles the backends in the background.
func startJobs(ctx context.Context, cfg config.Config, b *base, s *seams, opts Options, logger *slog.Logger) (*workers, error) {
	core, bes := b.core, b.bes
	client, err := jobs.NewClient(b.st.Pool, jobs.ClientOptions{
		Host: cfg.Host,
		Work: cfg.Workers, Logger: logger, Extra: opts.ExtraWorkers,
		Deps: jobs.Deps{Auth: b.auth, Core: core, Sweeps: s.sweeps, Logger: logger, Intervals: jobs.Intervals(cfg.Intervals),
			ContentSweep: b.contentSweep, Hosts: s.hosts},
	})
	if err != nil {
		return nil, err
	}
	core.UseJobs(client)
	// A local box's process runs in one process only, its owner: a working
	// process, named by its presence (its River client's ID). The web
	// process with --workers=false owns none and starts none.
	for _, b := range bes {
		if lb, ok := b.Snap.(*local.Backend); ok {
			if id := client.WorkerID(); cfg.Workers && id != "" {
				lb.SetOwner(id)
			} else if !cfg.Workers {
				lb.LeaveProcesses()
			}
		}
	}
	w := &workers{cfg: cfg, client: client, base: b, logger: logger}
	if !cfg.Workers {
		return w, nil
	}
	// Jobs run on their own context: a signal stops new work through
	// Stop below, and running jobs get ShutdownTimeout to finish.
	if err := client.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, fmt.Errorf("start River: %w", err)
	}
	// Operations a stopped process cut short go on from their step.
	if _, err := core.Recover(ctx); err != nil {
		logger.Error("recover operations cut short", "err", err)
	}
	// A box moved to another host while this one was down is released
	// here before its process could start again.
	if err := jobs.ReleaseLeft(ctx, s.hosts, logger); err != nil {
		logger.Warn("release the copies of boxes another host owns", "err", err)
	}
	startLocalBoxes(ctx, cfg, core, s.take, s.boxes, b.st, bes, logger)
	// The reconcile runs at start and at each sweep; at start in the
	// background, so a backend that is slow to list never delays the
	// first page.
	go func() {
		if _, err := s.sweeps.Reconcile(context.WithoutCancel(ctx)); err != nil {
			logger.Warn("reconcile at start", "err", err)
		}
	}()
	return w, nil
}

// stopJobs stops River's workers, giving running jobs ShutdownTimeout to
// finish before they are cancelled.
func (w *workers) stopJobs(ctx context.Context) {
	if !w.cfg.Workers {
		return
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.cfg.ShutdownTimeout)
	defer cancel()
	w.logger.Info("stopping River: running jobs may finish", "within", w.cfg.ShutdownTimeout)
	if err := w.client.Stop(sctx); err != nil {
		w.logger.Warn("running jobs did not finish in time; cancelling them", "err", err)
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = w.client.StopAndCancel(cctx)
	}
}

// closeLocal ends the local boxes' processes this process owns, then
// unmounts the disk images nothing uses.
func (w *workers) closeLocal(ctx context.Context) {
	// A local box's process is boxsnap's child: it ends with the
	// process that owns it, and starts again in a live one (TakeOver).
	for _, b := range w.base.bes {
		if lb, ok := b.Snap.(*local.Backend); ok {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
			_ = lb.Close(cctx)
			cancel()
			local.UnmountIdle(lb.Root(), w.logger.With("backend", b.ID))
		}
	}
}
