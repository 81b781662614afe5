package api

import (
	"log/slog"
	"net/http"

	"github.com/boxsnap/boxsnap/app/api/answers"
	"github.com/boxsnap/boxsnap/app/auth"
	"github.com/boxsnap/boxsnap/app/pictures"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/app/snapshots/heads"
	"github.com/boxsnap/boxsnap/app/snapshots/hosts"
	"github.com/boxsnap/boxsnap/app/snapshots/keep"
	"github.com/boxsnap/boxsnap/app/snapshots/plans"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	"github.com/boxsnap/boxsnap/app/snapshots/tab"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
)

// Options are what the API needs.
type Options struct {
	Core *snapshots.Service
	// Take is the take: a snapshot of a box, and the result of its
	// operation.
	Take *take.Take
	// Keeps is a snapshot's keep, renewal, delete, name and note, its save
	// and unsave, a box's Delete history, and the result of their
	// operations.
	Keeps *keep.Keeps
	// Restores is a box's restore, its dry run and undo, and its reset.
	Restores *restore.Restores
	// Contents is the core's look inside snapshots and their moves: files,
	// comparisons, exports, imports and share codes.
	Contents *contents.Contents
	// Approvals is the requests for the person's word: the agent's news
	// and held turns, and the person's answers.
	Approvals *approvals.Approvals
	// Pictures is the snapshots' pictures of a box's screen, read.
	Pictures *pictures.Pictures
	Auth     *auth.Service
	Logger   *slog.Logger
	// Tab is the Snapshots tab's lists, which the snapshot listing pages
	// through.
	Tab *tab.Tab
	// Boxes is the boxes and threads: acquiring, listing, templates, the
	// trash, a box's release and forgetting a backend.
	Boxes *boxes.Boxes
	Heads *heads.Heads
	// Forks is the fork: a new box from a snapshot of another.
	Forks *fork.Forks
	// Hosts is the hosts boxsnap runs on: a box's move, a host marked gone
	// and its boxes taken over.
	Hosts *hosts.Hosts
}

// server holds the handlers' dependencies, and builds each group of
// handlers with what that group uses. Its own handlers are the
// operations', the threads' and the token check.
type server struct {
	operations
	approvals *approvals.Approvals
	pictures  *pictures.Pictures
	auth      *auth.Service
	tab       *tab.Tab
	plans     *plans.Plans
	hosts     *hosts.Hosts
}

// New returns the API's handler, mounted at /api/v1. The handler is a chi
// router, so its routes can be walked (the OpenAPI test does).
func New(opts Options) http.Handler { return newServer(opts).routes() }

// newServer holds opts for the handlers, the JSON API's and MCP's alike.
func newServer(opts Options) *server {
	looks := answers.Lookups{Core: opts.Core, Contents: opts.Contents, Heads: opts.Heads, Boxes: opts.Boxes,
		Take: opts.Take, Restores: opts.Restores, Keeps: opts.Keeps, Forks: opts.Forks, CheckRef: checkRef}
	ops := operations{failer: failer{logger: opts.Logger}, Lookups: looks}
	s := &server{operations: ops, tab: opts.Tab, approvals: opts.Approvals, pictures: opts.Pictures, auth: opts.Auth, hosts: opts.Hosts}
	if opts.Core != nil && opts.Restores != nil {
		s.plans = plans.New(opts.Core, opts.Restores, opts.Restores.Resets(), nil)
		if opts.Boxes != nil {
			s.plans.UseReleases(boxes.ReleaseChecksOf(opts.Boxes))
		}
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	return s
}
