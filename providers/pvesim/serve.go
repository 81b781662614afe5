package pvesim

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"
)

// Start listens on 127.0.0.1 on a free port and serves in the background
// until ctx ends or Close is called. It returns the base URL, without
// "/api2/json" (e.g. "https://127.0.0.1:41234").
func (s *Sim) Start(ctx context.Context) (string, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("pvesim: listen: %w", err)
	}
	go func() {
		if err := s.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("pvesim: serve", "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		_ = s.Close()
	}()
	return "https://" + ln.Addr().String(), nil
}

// Serve serves the API over TLS on ln (a plain TCP listener) until Close.
// HTTP/2 is off: Proxmox's server speaks HTTP/1.1, and clients read its
// errors from the reason phrase, which HTTP/2 does not have.
func (s *Sim) Serve(ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{s.cert},
			MinVersion:   tls.VersionTLS12,
			NextProtos:   []string{"http/1.1"},
		},
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
		ErrorLog:     slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	s.srvMu.Lock()
	if s.closed {
		s.srvMu.Unlock()
		return http.ErrServerClosed
	}
	s.srv, s.ln = srv, ln
	s.srvMu.Unlock()
	s.log.Info("pvesim simulator serving", "addr", ln.Addr().String())
	return srv.ServeTLS(ln, "", "")
}

// Close stops the server, if it was started. The state stays readable.
func (s *Sim) Close() error {
	s.srvMu.Lock()
	defer s.srvMu.Unlock()
	s.closed = true
	if s.srv == nil {
		return nil
	}
	if err := s.srv.Close(); err != nil {
		return fmt.Errorf("pvesim: close: %w", err)
	}
	return nil
}

// Handler returns the simulator's HTTP handler (the API under /api2/json,
// and the control API when it is on). Serve it over TLS only.
func (s *Sim) Handler() http.Handler {
	routes := s.routes()
	for i := range routes {
		routes[i].segs = strings.Split(strings.Trim(routes[i].pattern, "/"), "/")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", serverHeader)
		switch {
		case strings.HasPrefix(r.URL.Path, apiPrefix+"/") || r.URL.Path == apiPrefix:
			s.serveAPI(w, r, routes)
		case strings.HasPrefix(r.URL.Path, controlPrefix) && s.cfg.Control:
			s.serveControl(w, r)
		default:
			writeError(w, &apiError{status: http.StatusNotImplemented, message: "Method '" + r.Method + " " + r.URL.Path + "' not implemented"})
		}
	})
}
