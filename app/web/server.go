package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/boxsnap/boxsnap/app/auth"
	"github.com/boxsnap/boxsnap/app/pictures"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
	"github.com/boxsnap/boxsnap/app/snapshots/boxview"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/app/snapshots/heads"
	"github.com/boxsnap/boxsnap/app/snapshots/hosts"
	"github.com/boxsnap/boxsnap/app/snapshots/keep"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	"github.com/boxsnap/boxsnap/app/snapshots/tab"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
	"github.com/boxsnap/boxsnap/views"
)

// Options are what the web server needs.
type Options struct {
	Auth *auth.Service
	// Core is the snapshot core the pages call.
	Core *snapshots.Service
	// Take is the take the Take snapshot form asks.
	Take *take.Take
	// Keeps is a snapshot's keep, renewal, delete, name and note, its save
	// and unsave, and a box's Delete history, which the rows' buttons, the
	// bulk actions and the history's dialogs ask.
	Keeps *keep.Keeps
	// Restores is a box's restore, its dry run and undo, and its reset.
	Restores *restore.Restores
	// Contents is the core's look inside snapshots and their moves: files,
	// comparisons, exports, imports and share codes.
	Contents *contents.Contents
	// Approvals is the requests for the person's word the pages list and
	// answer.
	Approvals *approvals.Approvals
	// Pictures is the snapshots' pictures of a box's screen, shown.
	Pictures *pictures.Pictures
	Views    *views.Views
	Logger   *slog.Logger
	// Tab is the Snapshots tab's and the Boxes page's lists.
	Tab *tab.Tab
	// Boxes is the boxes and threads: acquiring, listing, templates, the
	// trash, a box's release and forgetting a backend.
	Boxes *boxes.Boxes
	// Heads is the boxes' heads and the snapshots' lineages: a row's
	// "from ‘…’" and its Set as head.
	Heads *heads.Heads
	// BoxViews reads a box's page at one moment, and Settings' counts of
	// the automatic history.
	BoxViews *boxview.Views
	// Forks is the fork: a new box from a snapshot of another.
	Forks *fork.Forks
	// Hosts is the hosts boxsnap runs on: the Hosts page, a box's move and
	// a gone host's takeover.
	Hosts *hosts.Hosts
	// SecureCookies marks cookies Secure (served over TLS).
	SecureCookies bool
	// JobsUI is River's dashboard, mounted at /jobs behind sign-in; nil
	// answers 503 there.
	JobsUI http.Handler
	// API serves /api/v1 (agent tools and REST); nil answers 404 there.
	API http.Handler
	// MCP serves the agent tools over the Model Context Protocol at /mcp;
	// nil answers 404 there.
	MCP http.Handler
	// Install is this install's ID, shown on the home page.
	Install string
}

// Server is boxsnap's web app.
type Server struct {
	opts Options
	// rows builds the snapshot rows and box cards the pages show.
	rows *pagemodel.RowBuilder
	// dialogs builds the dialogs' view data.
	dialogs *pagemodel.DialogBuilder
	// boxes is opts.Boxes, the boxes and threads the pages call.
	boxes *boxes.Boxes
	// throttle counts wrong passwords per client address; a throttled
	// answer waits slowFor, at most len(slowed) at once.
	throttle *signInThrottle
	slowed   chan struct{}
	slowFor  time.Duration
	// healthz is /healthz's look at the database; nil with no Core.
	healthz *healthCheck
	// shown holds the secrets posts made until their page shows them.
	shown reveals
}

// New makes the web server.
func New(opts Options) (*Server, error) {
	if opts.Auth == nil || opts.Views == nil || opts.Logger == nil {
		return nil, errors.New("web: Auth, Views and Logger are required")
	}
	s := &Server{opts: opts, boxes: opts.Boxes, throttle: newSignInThrottle(nil),
		slowed: make(chan struct{}, maxSlowed), slowFor: time.Second}
	s.rows, s.dialogs = pagemodel.NewBuilders(pagemodel.Parts{Core: opts.Core, Keeps: opts.Keeps, Boxes: opts.Boxes, Contents: opts.Contents, Heads: opts.Heads,
		Tab: opts.Tab, Approvals: opts.Approvals, Restores: opts.Restores, Forks: opts.Forks, Logger: opts.Logger})
	if opts.Core != nil {
		s.healthz = &healthCheck{down: func(ctx context.Context) string { return databaseDown(ctx, opts.Core.PingDatabase) }}
	}
	return s, nil
}

// sessionCookie is the name of the session cookie.
const sessionCookie = "boxsnap_session"

type ctxKey int

const signedInKey ctxKey = iota

func signedIn(ctx context.Context) bool {
	v, _ := ctx.Value(signedInKey).(bool)
	return v
}

func (s *Server) setSessionCookie(w http.ResponseWriter, token string) {
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: token, Path: "/", HttpOnly: true, Secure: s.opts.SecureCookies,
		SameSite: http.SameSiteLaxMode, MaxAge: int(auth.SessionLifetime.Seconds()),
	})
}

func (s *Server) clearSessionCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", HttpOnly: true,
		Secure: s.opts.SecureCookies, SameSite: http.SameSiteLaxMode, MaxAge: -1})
}

// renderFailed is what a page that could not be drawn says (its error is
// logged, never shown).
const renderFailed = "Something went wrong showing this page."

// render writes a page, and on a template error logs it and answers a plain
// 500. A whole page for the signed-in owner carries the count of requests
// waiting for the person's word, which the navigation shows beside
// Requests: this is the one place it is read and set.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	whole := views.Whole{Data: data}
	if !views.Partial(r) && r != nil && signedIn(r.Context()) && s.opts.Core != nil {
		if list, err := s.opts.Approvals.List(r.Context(), snapshots.Owner(), ""); err == nil {
			whole.Requests = len(list)
		}
	}
	if err := s.opts.Views.Render(w, r, status, name, whole); err != nil {
		s.logger(r).Error("render", "page", name, "err", err)
		http.Error(w, renderFailed, http.StatusInternalServerError)
	}
}

type errorPage struct {
	Page           views.Page
	Title, Message string
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	s.logger(r).Error("request failed", "err", err)
	s.render(w, r, http.StatusInternalServerError, "error", errorPage{
		Page: views.Page{SignedIn: signedIn(r.Context())}, Title: "Something went wrong",
		Message: "boxsnap could not do that. The error is in its log, with this request's ID.",
	})
}
