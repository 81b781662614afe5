package boot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/app/store"
)

// Serve runs the web app, the JSON API and (unless cfg.Workers is false)
// River's workers until ctx ends, then stops them in order.
func Serve(ctx context.Context, cfg config.Config, logger *slog.Logger, stdout io.Writer, opts Options) error {
	// Take the port first: a port in use fails before anything is made.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return &Problem{What: fmt.Sprintf("port %s is in use by another program", cfg.Addr), Fix: "stop it, or choose another address with --addr or BOXSNAP_ADDR"}
		}
		return &Problem{What: fmt.Sprintf("cannot listen on %s (%s)", cfg.Addr, shortErr(err)), Fix: "choose another address with --addr or BOXSNAP_ADDR", Err: err}
	}
	defer ln.Close()
	if strings.HasSuffix(cfg.BaseURL, ":0") {
		// Port 0 asks the kernel for a free port: links name the real one.
		cfg.BaseURL = strings.TrimSuffix(cfg.BaseURL, "127.0.0.1:0")
		cfg.BaseURL = strings.TrimSuffix(cfg.BaseURL, "localhost:0") + ln.Addr().String()
	}
	return run(ctx, cfg, logger, stdout, opts, ln)
}

// Work runs River's workers alone until ctx ends.
func Work(ctx context.Context, cfg config.Config, logger *slog.Logger, opts Options) error {
	cfg.Workers = true
	return run(ctx, cfg, logger, io.Discard, opts, nil)
}

// Migrate applies every migration and exits.
func Migrate(ctx context.Context, cfg config.Config, logger *slog.Logger) error {
	db, err := OpenDatabase(ctx, cfg, logger, true)
	if err != nil {
		return err
	}
	defer db.Close(context.WithoutCancel(ctx))
	if err := store.Migrate(ctx, db.Pool, logger); err != nil {
		return err
	}
	logger.Info("migrations are up to date")
	return nil
}

// run starts the process along its steps: the database, the core and its
// backends, the seams, the pictures, the jobs, and (with a listener) the
// surfaces it serves until ctx ends; each step stops in the reverse order.
func run(ctx context.Context, cfg config.Config, logger *slog.Logger, stdout io.Writer, opts Options, ln net.Listener) error {
	started := time.Now()
	// The data folder is made first, passable by a box's user, whichever
	// database is used: with DATABASE_URL nothing else makes it before the
	// local backend, whose MkdirAll would make it 0700, and no box's process
	// could reach its folder.
	if err := checkWritable(cfg.DataDir); err != nil {
		return err
	}
	// serve owns the embedded cluster; work attaches to the one a serve runs.
	db, err := OpenDatabase(ctx, cfg, logger, ln == nil)
	if err != nil {
		return err
	}
	// The database stops last, after the jobs, whatever happens below.
	defer db.Close(context.WithoutCancel(ctx))

	c, err := newBase(ctx, cfg, db, logger)
	if err != nil {
		return err
	}
	s, err := newSeams(cfg, c, logger)
	if err != nil {
		return err
	}
	taker := usePictureTaker(s.pictures, logger)
	if taker != nil {
		defer func() { _ = taker.Close() }()
	}
	if err := c.core.RegisterBackends(ctx); err != nil {
		return err
	}
	// The host is seen before any job runs, and while the process lives;
	// its workers too when this process runs them.
	if cfg.Workers {
		s.hosts.RunsWorkers()
	}
	s.hosts.UseBackfillEvery(cfg.Intervals.Hosts)
	if err := s.hosts.Seen(ctx); err != nil {
		return err
	}
	go s.hosts.Beat(ctx)
	warmPictures(ctx, cfg, taker, s.boxes, logger)

	w, err := startJobs(ctx, cfg, c, s, opts, logger)
	if err != nil {
		return err
	}
	if ln == nil { // work
		logger.Info("boxsnap work is running", "took", time.Since(started).Round(time.Millisecond))
		if opts.Ready != nil {
			opts.Ready("", w.client.Client)
		}
		<-ctx.Done()
		logger.Info("signal received: stopping")
		w.stopJobs(ctx)
		w.closeLocal(ctx)
		return nil
	}
	return serveWeb(ctx, cfg, c, s, w, ln, stdout, opts, started, logger)
}
