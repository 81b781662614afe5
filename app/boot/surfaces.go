package boot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"riverqueue.com/riverui"

	"github.com/boxsnap/boxsnap/app/api"
	"github.com/boxsnap/boxsnap/app/api/mcptools"
	"github.com/boxsnap/boxsnap/app/auth"
	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/app/snapshots/tab"
	"github.com/boxsnap/boxsnap/app/web"
	"github.com/boxsnap/boxsnap/views"
)

// httpShutdownTimeout bounds how long in-flight HTTP requests may take after
// a signal; running jobs have the configured ShutdownTimeout.
const httpShutdownTimeout = 10 * time.Second

// newSurfaces makes the web app with the JSON API, MCP and River's job
// dashboard mounted in it; stopUI stops the dashboard's background work.
func newSurfaces(ctx context.Context, cfg config.Config, b *base, s *seams, w *workers, logger *slog.Logger) (srv *web.Server, stopUI func(), err error) {
	core, st, authSvc, install := b.core, b.st, b.auth, b.install
	rs, tk, kp, bx, fk, cont, ap, pics, hd := s.restores, s.take, s.keeps, s.boxes, s.forks, s.contents, s.approvals, s.pictures, s.heads
	vw, err := views.New()
	if err != nil {
		return nil, nil, err
	}
	jobsUI, err := riverui.NewHandler(&riverui.HandlerOpts{
		Endpoints: riverui.NewEndpoints(w.client.Client, nil),
		Logger:    logger,
		Prefix:    "/jobs",
	})
	if err != nil {
		return nil, nil, fmt.Errorf("job dashboard: %w", err)
	}
	uiCtx, stopUI := context.WithCancel(context.WithoutCancel(ctx))
	if err := jobsUI.Start(uiCtx); err != nil {
		stopUI()
		return nil, nil, fmt.Errorf("job dashboard: %w", err)
	}
	lists := tab.New(st, core.Kernel, nil, logger)
	srv, err = web.New(web.Options{Auth: authSvc, Core: core, Restores: rs, Take: tk, Keeps: kp, Tab: lists, Boxes: bx, Forks: fk, Contents: cont, Approvals: ap, Pictures: pics, Heads: hd, BoxViews: s.boxViews, Hosts: s.hosts, API: api.New(api.Options{Core: core, Restores: rs, Take: tk, Keeps: kp, Tab: lists, Boxes: bx, Forks: fk, Contents: cont, Approvals: ap, Pictures: pics, Heads: hd, Hosts: s.hosts, Auth: authSvc, Logger: logger}), MCP: mcptools.MCP(api.Options{Core: core, Restores: rs, Take: tk, Keeps: kp, Tab: lists, Boxes: bx, Forks: fk, Contents: cont, Approvals: ap, Pictures: pics, Heads: hd, Hosts: s.hosts, Auth: authSvc, Logger: logger}), Views: vw, Logger: logger, SecureCookies: cfg.TLS(), JobsUI: jobsUI, Install: install})
	if err != nil {
		stopUI()
		return nil, nil, err
	}
	return srv, stopUI, nil
}

// serveWeb serves the surfaces on ln until ctx ends or the server stops,
// then stops the HTTP requests, the jobs, the dashboard and the local boxes
// in that order.
func serveWeb(ctx context.Context, cfg config.Config, b *base, s *seams, w *workers, ln net.Listener, stdout io.Writer, opts Options, started time.Time, logger *slog.Logger) error {
	setupToken, err := b.auth.Bootstrap(ctx, cfg.Password)
	if err != nil {
		return err
	}
	srv, stopUI, err := newSurfaces(ctx, cfg, b, s, w, logger)
	if err != nil {
		return err
	}
	defer stopUI()
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
		opts.Ready(url, w.client.Client)
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
	w.stopJobs(ctx)
	stopUI()
	w.closeLocal(ctx)
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return fmt.Errorf("web server: %w", serveErr)
	}
	return nil
}
