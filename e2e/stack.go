package e2e

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"riverqueue.com/riverui"

	"github.com/boxsnap/boxsnap/app/api"
	"github.com/boxsnap/boxsnap/app/auth"
	"github.com/boxsnap/boxsnap/app/pictures"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/app/snapshots/keep"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	"github.com/boxsnap/boxsnap/app/snapshots/seams"
	"github.com/boxsnap/boxsnap/app/snapshots/sweeps"
	"github.com/boxsnap/boxsnap/app/snapshots/tab"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/web"
	"github.com/boxsnap/boxsnap/jobs"
	"github.com/boxsnap/boxsnap/providers/local"
	"github.com/boxsnap/boxsnap/views"
)

// Password is the owner's password in a Stack.
const Password = "correct horse battery staple"

// StackOptions change a Stack.
type StackOptions struct {
	// LocalRoot is the local backend's folder (required).
	LocalRoot string
	Logger    *slog.Logger
	// NoWorkers leaves operations queued: nothing runs (a busy box).
	NoWorkers bool
	// Pictures gives the core a picture taker.
	Pictures *pictures.Taker
	// StopTimeout bounds a box's stop (a slow box ignores SIGTERM until
	// then); 20 s when 0.
	StopTimeout time.Duration
	// JobsUI mounts River's job dashboard at /jobs, as serve does.
	JobsUI bool
}

// Stack is boxsnap in this process: the core, River's workers and the web
// app on a free local port, over a migrated database.
type Stack struct {
	URL  string
	Core *snapshots.Service
	// Taker is the core's take.
	Taker *take.Take
	// Keeps is the core's keeps, renewals, deletes and edits.
	Keeps *keep.Keeps
	// Restores is the core's restores, resets and their undos.
	Restores *restore.Restores
	// Boxes is the boxes and threads, on Core.
	Boxes *boxes.Boxes
	// Forks is the fork, on Core.
	Forks *fork.Forks
	// Sweeps are the core's periodic work.
	Sweeps *sweeps.Sweeps
	// Contents is the core's look inside snapshots and their moves.
	Contents *contents.Contents
	// Approvals is the requests for the person's word.
	Approvals *approvals.Approvals
	Auth      *auth.Service
	Client    *river.Client[pgx.Tx]
	Local     *local.Backend
	// Pool is the stack's database, for a scene's records no backend here
	// can make (a release stopped at a held copy, which the local backend
	// never needs).
	Pool   *pgxpool.Pool
	jobs   *jobs.Client
	stopUI context.CancelFunc
	srv    *http.Server
	screen *http.Server
	// ScreenURL is a page served as a desktop box's screen.
	ScreenURL string
}

// Start assembles boxsnap on pool as boot.Serve does, with the local backend
// in opts.LocalRoot, and serves it.
func Start(ctx context.Context, pool *pgxpool.Pool, opts StackOptions) (*Stack, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := store.Migrate(ctx, pool, logger); err != nil {
		return nil, err
	}
	st := store.New(pool)
	a := auth.New(st, logger)
	install, err := a.InstallID(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := a.Bootstrap(ctx, Password); err != nil {
		return nil, fmt.Errorf("set the owner's password: %w", err)
	}
	if opts.StopTimeout == 0 {
		opts.StopTimeout = 20 * time.Second
	}
	// A box's process runs as an unprivileged user, who must reach its folder.
	if err := local.Passable(filepath.Dir(opts.LocalRoot), os.TempDir()); err != nil {
		return nil, err
	}
	// Each box a file system of its own, as boxsnap's default, of a bound
	// that fits what the tests write: its image takes about 95 MiB on the
	// host at once, not the 170 MiB of 16 GiB.
	lb, err := local.New(local.Config{ID: "local", Root: opts.LocalRoot, Install: install, Logger: logger, NoSync: true, StopTimeout: opts.StopTimeout,
		DiskImages: true, DiskBytes: 256 << 20})
	if err != nil {
		return nil, err
	}
	core, err := snapshots.New(snapshots.Options{Store: st, Install: install, Logger: logger,
		Backends: []snapshots.Backend{{ID: "local", Kind: "local", Label: "this host", Snap: lb, Boxes: lb}}})
	if err != nil {
		return nil, err
	}
	sm, err := seams.New(core, seams.Options{Store: st, Logger: logger})
	if err != nil {
		return nil, err
	}
	// This process is a host, as serve's is: the Hosts page lists it.
	if !opts.NoWorkers {
		sm.Hosts.RunsWorkers()
	}
	if err := sm.Hosts.Seen(ctx); err != nil {
		return nil, err
	}
	kp, bx, tk, rs, fk, sw := sm.Keeps, sm.Boxes, sm.Take, sm.Restores, sm.Forks, sm.Sweeps
	cont, ap, pics, hd := sm.Contents, sm.Approvals, sm.Pictures, sm.Heads
	if opts.Pictures != nil {
		pics.Use(opts.Pictures)
	}
	if err := core.RegisterBackends(ctx); err != nil {
		return nil, err
	}
	client, err := jobs.NewClient(pool, jobs.ClientOptions{Work: !opts.NoWorkers, Logger: logger,
		Deps: jobs.Deps{Auth: a, Core: core, Sweeps: sw, Logger: logger, ManualHistory: true}})
	if err != nil {
		return nil, err
	}
	core.UseJobs(client)
	if !opts.NoWorkers {
		if err := client.Start(context.WithoutCancel(ctx)); err != nil {
			return nil, fmt.Errorf("start River: %w", err)
		}
	}
	vw, err := views.New()
	if err != nil {
		return nil, err
	}
	s := &Stack{Core: core, Restores: rs, Taker: tk, Keeps: kp, Boxes: bx, Forks: fk, Sweeps: sw, Contents: cont, Approvals: ap, Auth: a, Client: client.Client, jobs: client, Local: lb, Pool: pool, stopUI: func() {}}
	var jobsUI http.Handler
	if opts.JobsUI {
		if jobsUI, err = s.startJobsUI(ctx, client.Client, logger); err != nil {
			return nil, err
		}
	}
	lists := tab.New(st, core.Kernel, nil, logger)
	w, err := web.New(web.Options{Auth: a, Core: core, Restores: rs, Take: tk, Keeps: kp, Tab: lists, Boxes: bx, Forks: fk, Contents: cont, Approvals: ap, Pictures: pics, Heads: hd, BoxViews: sm.BoxViews, Hosts: sm.Hosts, Views: vw, Logger: logger, API: api.New(api.Options{Core: core, Restores: rs, Take: tk, Keeps: kp, Tab: lists, Boxes: bx, Forks: fk, Contents: cont, Approvals: ap, Pictures: pics, Heads: hd, Hosts: sm.Hosts, Auth: a, Logger: logger}), JobsUI: jobsUI})
	if err != nil {
		s.stopUI()
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.URL = "http://" + ln.Addr().String()
	s.srv = &http.Server{Handler: w.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	sl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.ScreenURL = "http://" + sl.Addr().String() + "/"
	s.screen = &http.Server{Handler: http.HandlerFunc(screenPage), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.screen.Serve(sl) }()
	return s, nil
}

// startJobsUI starts River's job dashboard under /jobs, until Close.
func (s *Stack) startJobsUI(ctx context.Context, client *river.Client[pgx.Tx], logger *slog.Logger) (http.Handler, error) {
	ui, err := riverui.NewHandler(&riverui.HandlerOpts{Endpoints: riverui.NewEndpoints(client, nil), Logger: logger, Prefix: "/jobs"})
	if err != nil {
		return nil, fmt.Errorf("job dashboard: %w", err)
	}
	var uiCtx context.Context
	uiCtx, s.stopUI = context.WithCancel(context.WithoutCancel(ctx))
	if err := ui.Start(uiCtx); err != nil {
		s.stopUI()
		return nil, fmt.Errorf("job dashboard: %w", err)
	}
	return ui, nil
}

// screenPage is a desktop box's screen: a small page with the time on it,
// so each snapshot's picture differs.
func screenPage(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<!doctype html><html><body style="margin:0;font:28px system-ui;background:#1f4d7a;color:#fff">
<div style="padding:40px"><div style="background:#fff;color:#222;border-radius:8px;padding:30px;width:60%%">
<h1 style="margin:0 0 10px">Sign-in flow</h1><p>Editor · %s</p></div></div></body></html>`, time.Now().Format("15:04:05"))
}

// Close stops the web server, the screen and the workers, and unmounts
// the local boxes' file systems.
func (s *Stack) Close(ctx context.Context) error {
	var errs []error
	errs = append(errs, s.srv.Shutdown(ctx), s.screen.Shutdown(ctx))
	s.stopUI()
	// Running operations are cancelled: a slow box's stop ends at once.
	if err := s.jobs.StopAndCancel(ctx); err != nil && !errors.Is(err, context.Canceled) {
		errs = append(errs, err)
	}
	// Each local box is a file system of its own (a loop mount, as root):
	// unmounted, so the stack's folder can be removed.
	errs = append(errs, local.UnmountAll(s.Local.Root()))
	return errors.Join(errs...)
}

// Wait waits for an operation to end, up to a minute.
func (s *Stack) Wait(ctx context.Context, op *snapshots.Operation) (*snapshots.Operation, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	got, err := s.Core.Wait(ctx, op.ID)
	if err != nil {
		return nil, err
	}
	if got.State == snapshots.OpRunning {
		return got, fmt.Errorf("operation %s still running at %s", got.ID, got.Step)
	}
	return got, nil
}
