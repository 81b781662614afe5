package api

import (
	"log/slog"
	"net/http"

	"github.com/boxsnap/boxsnap/app/auth"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/tab"
)

// Options are what the API needs.
type Options struct {
	Core *snapshots.Service
	// Tab is the Snapshots tab's lists, which the snapshot listing pages
	// through.
	Tab    *tab.Tab
	Auth   *auth.Service
	Logger *slog.Logger
}

// server holds the handlers' dependencies.
type server struct {
	core   *snapshots.Service
	tab    *tab.Tab
	auth   *auth.Service
	logger *slog.Logger
}

// New returns the API's handler, mounted at /api/v1. The handler is a chi
// router, so its routes can be walked (the OpenAPI test does).
func New(opts Options) http.Handler {
	s := &server{core: opts.Core, tab: opts.Tab, auth: opts.Auth, logger: opts.Logger}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	return s.routes()
}
