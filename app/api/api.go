// Package api serves the agent tools (/api/v1/tools/<tool>) and the REST API
// under /api/v1, for agents (a thread's bearer token) and the owner's CLI (a
// personal API token). It calls the core; it must never import jobs, app/web
// or a provider.
package api

import (
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/auth"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// Options are what the API needs.
type Options struct {
	Core   *snapshots.Service
	Auth   *auth.Service
	Logger *slog.Logger
}

// New returns the API's handler, mounted at /api/v1.
func New(opts Options) http.Handler {
	r := chi.NewRouter()
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"code":"not_found","message":"No such endpoint."}}` + "\n"))
	})
	return r
}
