package boot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"riverqueue.com/riverui"

	"github.com/boxsnap/boxsnap/app/api"
	"github.com/boxsnap/boxsnap/app/api/mcptools"
	"github.com/boxsnap/boxsnap/app/auth"
	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/app/pictures"
	"github.com/boxsnap/boxsnap/app/remote"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/app/snapshots/heads"
	"github.com/boxsnap/boxsnap/app/snapshots/keep"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	"github.com/boxsnap/boxsnap/app/snapshots/sweeps"
	"github.com/boxsnap/boxsnap/app/snapshots/tab"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/web"
	"github.com/boxsnap/boxsnap/jobs"
	"github.com/boxsnap/boxsnap/providers/local"
	"github.com/boxsnap/boxsnap/views"
)

// httpShutdownTimeout bounds how long in-flight HTTP requests may take after
// a signal; running jobs have the configured ShutdownTimeout.
const httpShutdownTimeout = 10 * time.Second

// Options are what tests change about a process.
type Options struct {
	// ExtraWorkers registers more River workers (tests).
	ExtraWorkers func(*river.Workers)
	// Ready is called once the process serves, with its URL (tests).
	Ready func(url string, client *river.Client[pgx.Tx])
}

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

	if err := store.Migrate(ctx, db.Pool, logger); err != nil {
		return err
	}
	st := store.New(db.Pool)
	authSvc := auth.New(st, logger)
	install, err := authSvc.InstallID(ctx)
	if err != nil {
		return err
	}
	bes, err := backends(cfg, install, logger)
	if err != nil {
		return err
	}
	// Imports are checked in the data folder, beside the snapshots they
	// become, rather than in a /tmp that may be small or in memory.
	tmp := filepath.Join(cfg.DataDir, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return fmt.Errorf("make %s: %w", tmp, err)
	}
	core, err := snapshots.New(snapshots.Options{Store: st, Backends: bes, Install: install, Logger: logger})
	if err != nil {
		return err
	}
	// The sweeps register their kinds of operation with the core's engine,
	// before its workers start.
	// The keeps register theirs (Keep, Unkeep, Delete, Expiry), and the
	// boxes, the take, the restores and the sweeps delete through them.
	kp, err := keep.New(core, keep.Options{Store: st, Logger: logger})
	if err != nil {
		return err
	}
	// The boxes register their kinds of operation (Release, Untrash) with
	// the core's engine, before its workers start; the kernel reads boxes
	// and templates through them.
	bx, err := boxes.New(core, boxes.Options{Store: st, Deletes: kp, Logger: logger})
	if err != nil {
		return err
	}
	core.UseBoxes(bx)
	// The take registers its kind of operation with the core's engine,
	// before its workers start.
	tk, err := take.New(core, take.Options{Store: st, Deletes: kp, Logger: logger})
	if err != nil {
		return err
	}
	// The restores register their kinds of operation (Restore, Reset) with
	// the core's engine, before its workers start; their undos are the
	// core's takes.
	rs, err := restore.New(core, restore.Options{Store: st, Deletes: kp, Taker: core, Templates: bx, Logger: logger})
	if err != nil {
		return err
	}
	// The fork registers its kind of operation with the core's engine,
	// before its workers start.
	fk, err := fork.New(core, fork.Options{Store: st, Logger: logger, MaxCount: cfg.ForkMaxCount})
	if err != nil {
		return err
	}
	sw, err := sweeps.New(sweeps.Options{Store: st, Kernel: core, Snaps: kp, Taker: tk, Boxes: bx, Straight: rs, Logger: logger})
	if err != nil {
		return err
	}
	// Contents registers its Import operation with the core's engine before
	// River's workers start, and gives a restore's dry run its preview.
	cont, err := contents.New(core, core, contents.Options{Store: st, TempDir: tmp, FetchShared: remote.FetchShared})
	if err != nil {
		return err
	}
	rs.UseRestorePreview(cont)
	ap, err := approvals.New(core, approvals.Options{Store: st, Engine: core.Engine(), Restores: rs, Logger: logger})
	if err != nil {
		return err
	}
	rs.UseApprovals(ap)
	pics, err := pictures.NewPictures(core, pictures.KeepOptions{Store: st, Logger: logger})
	if err != nil {
		return err
	}
	core.UsePictures(pics)
	tk.UsePictures(pics)
	hd, err := heads.New(core, core, heads.Options{Store: st})
	if err != nil {
		return err
	}
	rs.UsePictures(pics)
	// Pictures need npm's playwright-core (make browser-deps); without it
	// they are off, said once, and never fetched from anywhere.
	driver := os.Getenv("PLAYWRIGHT_DRIVER_DIR")
	if driver == "" {
		driver = filepath.Join(".cache", "playwright-driver-"+pictures.PlaywrightCoreVersion)
	}
	var taker *pictures.Taker
	if _, err := os.Stat(filepath.Join(driver, "package", "cli.js")); err == nil {
		taker = pictures.New(pictures.Options{Logger: logger, DriverDir: driver})
		pics.Use(taker)
		defer func() { _ = taker.Close() }()
	} else {
		logger.Info("pictures of screens are off: no playwright driver here (make browser-deps installs it)", "looked_in", driver)
	}
	if err := core.RegisterBackends(ctx); err != nil {
		return err
	}
	if taker != nil && cfg.Workers && (cfg.Demo || hasScreens(ctx, bx)) {
		// Chromium takes longer to start than a picture may wait (2 s):
		// warm it now, so the first take's picture is not lost. The demo
		// takes its first snapshots at once, so it waits for it.
		warm := func() {
			if err := taker.Start(); err != nil {
				logger.Warn("pictures are off: the browser that takes them did not start", "err", err)
			}
		}
		if cfg.Demo {
			warm()
		} else {
			go warm()
		}
	}

	client, err := jobs.NewClient(db.Pool, jobs.ClientOptions{
		Work: cfg.Workers, Logger: logger, Extra: opts.ExtraWorkers,
		Deps: jobs.Deps{Auth: authSvc, Core: core, Sweeps: sw, Logger: logger, Intervals: jobs.Intervals(cfg.Intervals)},
	})
	if err != nil {
		return err
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
	closeLocal := func() {
		// A local box's process is boxsnap's child: it ends with the
		// process that owns it, and starts again in a live one (TakeOver).
		for _, b := range bes {
			if lb, ok := b.Snap.(*local.Backend); ok {
				cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
				_ = lb.Close(cctx)
				cancel()
			}
		}
	}
	if cfg.Workers {
		// Jobs run on their own context: a signal stops new work through
		// Stop below, and running jobs get ShutdownTimeout to finish.
		if err := client.Start(context.WithoutCancel(ctx)); err != nil {
			return fmt.Errorf("start River: %w", err)
		}
		// Operations a stopped process cut short go on from their step.
		if _, err := core.Recover(ctx); err != nil {
			logger.Error("recover operations cut short", "err", err)
		}
		startLocalBoxes(ctx, cfg, core, tk, bx, st, bes, logger)
		// The reconcile runs at start and at each sweep; at start in the
		// background, so a backend that is slow to list never delays the
		// first page.
		go func() {
			if _, err := sw.Reconcile(context.WithoutCancel(ctx)); err != nil {
				logger.Warn("reconcile at start", "err", err)
			}
		}()
	}
	stopJobs := func() {
		if !cfg.Workers {
			return
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
		defer cancel()
		logger.Info("stopping River: running jobs may finish", "within", cfg.ShutdownTimeout)
		if err := client.Stop(sctx); err != nil {
			logger.Warn("running jobs did not finish in time; cancelling them", "err", err)
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_ = client.StopAndCancel(cctx)
		}
	}

	if ln == nil { // work
		logger.Info("boxsnap work is running", "took", time.Since(started).Round(time.Millisecond))
		if opts.Ready != nil {
			opts.Ready("", client.Client)
		}
		<-ctx.Done()
		logger.Info("signal received: stopping")
		stopJobs()
		closeLocal()
		return nil
	}

	setupToken, err := authSvc.Bootstrap(ctx, cfg.Password)
	if err != nil {
		return err
	}
	vw, err := views.New()
	if err != nil {
		return err
	}
	jobsUI, err := riverui.NewHandler(&riverui.HandlerOpts{
		Endpoints: riverui.NewEndpoints(client.Client, nil),
		Logger:    logger,
		Prefix:    "/jobs",
	})
	if err != nil {
		return fmt.Errorf("job dashboard: %w", err)
	}
	uiCtx, stopUI := context.WithCancel(context.WithoutCancel(ctx))
	defer stopUI()
	if err := jobsUI.Start(uiCtx); err != nil {
		return fmt.Errorf("job dashboard: %w", err)
	}
	lists := tab.New(st, core.Kernel, nil, logger)
	srv, err := web.New(web.Options{Auth: authSvc, Core: core, Restores: rs, Take: tk, Keeps: kp, Tab: lists, Boxes: bx, Forks: fk, Contents: cont, Approvals: ap, Pictures: pics, Heads: hd, API: api.New(api.Options{Core: core, Restores: rs, Take: tk, Keeps: kp, Tab: lists, Boxes: bx, Forks: fk, Contents: cont, Approvals: ap, Pictures: pics, Heads: hd, Auth: authSvc, Logger: logger}), MCP: mcptools.MCP(api.Options{Core: core, Restores: rs, Take: tk, Keeps: kp, Tab: lists, Boxes: bx, Forks: fk, Contents: cont, Approvals: ap, Pictures: pics, Heads: hd, Auth: authSvc, Logger: logger}), Views: vw, Logger: logger, SecureCookies: cfg.TLS(), JobsUI: jobsUI, Install: install})
	if err != nil {
		return err
	}
	httpSrv := web.NewHTTPServer(srv.Handler())
	httpSrv.ErrorLog = slog.NewLogLogger(logger.Handler(), slog.LevelWarn)
	served := make(chan error, 1)
	go func() {
		if cfg.TLSCert != "" {
			served <- httpSrv.ServeTLS(ln, cfg.TLSCert, cfg.TLSKey)
		} else {
			served <- httpSrv.Serve(ln)
		}
	}()

	url := cfg.BaseURL
	logger.Info("boxsnap is serving", "url", url, "workers", cfg.Workers, "took", time.Since(started).Round(time.Millisecond))
	fmt.Fprintf(stdout, "boxsnap is running at %s\n", url)
	switch {
	case setupToken != "":
		fmt.Fprintf(stdout, "Set the owner's password: open %s/setup/%s (it works once, within %s).\n", url, setupToken, auth.SetupLinkLifetime)
	case cfg.Password != "":
		fmt.Fprintln(stdout, "Sign in with the password in BOXSNAP_PASSWORD.")
	default:
		fmt.Fprintln(stdout, "Sign in with the owner's password.")
	}
	if opts.Ready != nil {
		opts.Ready(url, client.Client)
	}

	var serveErr error
	select {
	case <-ctx.Done():
		logger.Info("signal received: stopping")
	case serveErr = <-served:
		logger.Error("the web server stopped", "err", serveErr)
	}
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), httpShutdownTimeout)
	if err := httpSrv.Shutdown(hctx); err != nil {
		logger.Warn("HTTP requests did not finish in time", "err", err)
	}
	cancel()
	stopJobs()
	stopUI()
	closeLocal()
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return fmt.Errorf("web server: %w", serveErr)
	}
	return nil
}

// hasScreens reports whether any box serves its screen, so pictures are
// taken.
func hasScreens(ctx context.Context, bx *boxes.Boxes) bool {
	boxes, err := bx.List(ctx, snapshots.Owner())
	if err != nil {
		return false
	}
	for _, b := range boxes {
		if b.HasScreen && b.State != snapshots.BoxReleased {
			return true
		}
	}
	return false
}
