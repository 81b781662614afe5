package web

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5/middleware"

	"github.com/boxsnap/boxsnap/app/logging"
)

// logRequests gives each request a logger carrying its request ID, and logs
// one line when it ends.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		l := s.opts.Logger.With("request_id", middleware.GetReqID(r.Context()))
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r.WithContext(logging.With(r.Context(), l)))
		status := ww.Status()
		if status == 0 {
			status = http.StatusOK
		}
		level := slog.LevelInfo
		if strings.HasPrefix(r.URL.Path, "/static/") || r.URL.Path == "/healthz" {
			level = slog.LevelDebug
		}
		l.Log(r.Context(), level, "request", "method", r.Method, "path", r.URL.Path, "status", status,
			"bytes", ww.BytesWritten(), "took", time.Since(start).Round(time.Microsecond))
	})
}

func (s *Server) logger(r *http.Request) *slog.Logger {
	return logging.From(r.Context(), s.opts.Logger)
}

// securityHeaders sets a strict Content-Security-Policy on boxsnap's own
// pages (no inline script); River's dashboard under /jobs brings its own.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		if !strings.HasPrefix(r.URL.Path, "/jobs") {
			h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
		}
		next.ServeHTTP(w, r)
	})
}

func cacheStatic(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		next.ServeHTTP(w, r)
	})
}

// session marks the request signed in when its cookie names a live session.
func (s *Server) session(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie(sessionCookie)
		if err == nil && c.Value != "" {
			if err := s.opts.Auth.CheckSession(r.Context(), c.Value); err == nil {
				r = r.WithContext(context.WithValue(r.Context(), signedInKey, true))
			}
		}
		next.ServeHTTP(w, r)
	})
}

// requireOwner sends a signed-out page request to sign in, and answers 401
// to an API call of River's dashboard or an htmx request.
func (s *Server) requireOwner(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if signedIn(r.Context()) {
			next.ServeHTTP(w, r)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/jobs/api/") || r.Header.Get("HX-Request") == "true" || r.Method != http.MethodGet {
			http.Error(w, "Sign in first.", http.StatusUnauthorized)
			return
		}
		http.Redirect(w, r, "/signin?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
	})
}
