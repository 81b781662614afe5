package web

import (
	"io/fs"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/boxsnap/boxsnap/static"
)

// Handler is the whole web surface: pages, static files, /jobs and /api/v1.
// Every route reads in this one table.
func (s *Server) Handler() http.Handler {
	return crossOrigin(s.router())
}

// router is the route table itself (the fuzz test walks it).
func (s *Server) router() *chi.Mux {
	r := chi.NewRouter()
	r.Use(middleware.RequestID, s.logRequests, middleware.Recoverer, securityHeaders, boundRequests)

	staticFS, _ := fs.Sub(static.Files, ".")
	r.Handle("/static/*", http.StripPrefix("/static/", cacheStatic(http.FileServerFS(staticFS))))
	r.Get("/healthz", s.health)
	r.Get("/favicon.ico", favicon)
	r.NotFound(s.session(http.HandlerFunc(s.notFound)).ServeHTTP)

	// Pages anyone may reach.
	r.Group(func(r chi.Router) {
		r.Use(s.session)
		r.Get("/signin", s.showSignIn)
		r.Post("/signin", s.signIn)
		r.Get("/setup/{token}", s.showSetup)
		r.Post("/setup/{token}", s.setup)
	})

	// Pages for the signed-in owner.
	r.Group(func(r chi.Router) {
		r.Use(s.session, s.requireOwner)
		r.Get("/", showLanding)
		r.Get("/boxes", s.oneRead(s.showMachines))
		r.Post("/boxes", s.newBox)
		r.Get("/boxes/threads", s.oneRead(s.showThreads))
		r.Post("/boxes/threads", s.createThread)
		r.Get("/boxes/snapshots", s.oneRead(s.showSnapshotsTab))
		r.Get("/approvals", s.oneRead(s.showApprovals))
		r.Post("/approvals/{id}/approve", s.approve)
		r.Post("/approvals/{id}/decline", s.decline)
		r.Get("/backends/{backend}/forget", s.showForgetDialog)
		r.Post("/backends/{backend}/forget", s.forgetBackend)
		r.Get("/boxes/trash", s.oneRead(s.showTrash))
		r.Get("/boxes/snapshots/bulk", s.showBulkDialog)
		r.Post("/boxes/snapshots/bulk", s.bulkSnapshots)
		r.Get("/boxes/{box}", s.oneRead(s.showBoxPage))
		r.Get("/boxes/{box}/live", s.oneRead(s.showBoxLive))
		r.Post("/boxes/{box}/start", s.startBox)
		r.Get("/boxes/{box}/release", s.showReleaseDialog)
		r.Post("/boxes/{box}/release", s.releaseBox)
		r.Post("/boxes/{box}/trash/restore", s.restoreFromTrash)
		r.Get("/boxes/{box}/trash/empty", s.showEmptyTrashDialog)
		r.Post("/boxes/{box}/trash/empty", s.emptyTrash)
		r.Get("/boxes/{box}/reset", s.showResetDialog)
		r.Post("/boxes/{box}/reset", s.resetBox)
		r.Post("/boxes/{box}/undo", s.undoBox)
		r.Get("/boxes/{box}/take", s.showTakeDialog)
		r.Post("/boxes/{box}/take", s.takeSnapshot)
		r.Get("/boxes/{box}/snapshots/{id}/restore", s.showRestoreDialog)
		r.Post("/boxes/{box}/snapshots/{id}/restore", s.restoreSnapshot)
		r.Get("/boxes/{box}/snapshots/{id}/fork", s.showForkDialog)
		r.Post("/boxes/{box}/snapshots/{id}/fork", s.forkSnapshot)
		r.Get("/boxes/{box}/snapshots/{id}/keep", s.showKeepDialog)
		r.Post("/boxes/{box}/snapshots/{id}/keep", s.keepSnapshot)
		r.Post("/boxes/{box}/snapshots/{id}/unkeep", s.unkeepSnapshot)
		r.Post("/boxes/{box}/snapshots/{id}/renew", s.renewSnapshot)
		r.Post("/boxes/{box}/snapshots/{id}/head", func(w http.ResponseWriter, r *http.Request) { setHead(s, w, r) })
		r.Get("/boxes/{box}/snapshots/{id}/save", s.showSaveDialog)
		r.Post("/boxes/{box}/snapshots/{id}/save", s.saveSnapshot)
		r.Get("/boxes/{box}/snapshots/{id}/unsave", s.showUnsaveDialog)
		r.Post("/boxes/{box}/snapshots/{id}/unsave", s.unsaveSnapshot)
		r.Post("/boxes/{box}/history", s.setBoxHistory)
		r.Get("/boxes/{box}/history/delete", s.showDeleteHistoryDialog)
		r.Post("/boxes/{box}/history/delete", s.deleteHistory)
		r.Get("/boxes/{box}/snapshots/{id}/delete", s.showDeleteDialog)
		r.Post("/boxes/{box}/snapshots/{id}/delete", s.deleteSnapshot)
		r.Get("/boxes/{box}/snapshots/{id}/rename", s.showRenameDialog)
		r.Post("/boxes/{box}/snapshots/{id}/rename", s.renameSnapshot)
		r.Get("/boxes/{box}/snapshots/{id}/note", s.showNoteDialog)
		r.Post("/boxes/{box}/snapshots/{id}/note", s.noteSnapshot)
		r.Get("/boxes/{box}/snapshots/{id}/files", s.showSnapshotFiles)
		r.Get("/boxes/{box}/snapshots/{id}/file", s.showSnapshotFile)
		r.Get("/boxes/{box}/snapshots/{id}/download", s.downloadSnapshot)
		r.Get("/boxes/{box}/snapshots/{id}/compare", s.showSnapshotCompare)
		r.Get("/boxes/{box}/snapshots/{id}/diff", s.showSnapshotDiff)
		r.Get("/boxes/{box}/snapshots/{id}/export", s.showSnapshotExportDialog)
		r.Get("/boxes/{box}/export", s.exportSnapshots)
		r.Get("/boxes/{box}/snapshots/{id}/share", s.showShareDialog)
		r.Post("/boxes/{box}/snapshots/{id}/share", s.makeShare)
		r.Get("/import", s.showImport)
		r.Post("/import", s.importSnapshots)
		r.Post("/import/redeem", s.redeemShare)
		r.Post("/import/shares/{id}/revoke", s.revokeShare)
		r.Post("/operations/{id}/check", s.checkOperation)
		r.Get("/toasts", s.showToasts)
		r.Get("/events", s.showEvents)
		r.Get("/pictures/{id}", s.showPicture)
		r.Get("/settings/snapshots", s.showSnapshotSettings)
		r.Post("/settings/snapshots", s.saveSnapshotSettings)
		r.Post("/settings/snapshots/switches", s.saveSnapshotSwitches)
		r.Get("/settings/snapshots/{section}", s.showSnapshotSettingsSection)
		r.Get("/settings", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/settings/snapshots", http.StatusSeeOther)
		})
		r.Get("/settings/templates", s.showTemplates)
		r.Post("/settings/templates", s.saveTemplate)
		r.Post("/settings/templates/{name}/delete", s.deleteTemplate)
		r.Post("/signout", s.signOut)
		r.Get("/settings/tokens", s.showTokens)
		r.Post("/settings/tokens", s.createToken)
		r.Post("/settings/tokens/{id}/revoke", s.revokeToken)
		r.Get("/settings/hosts", func(w http.ResponseWriter, r *http.Request) { showHosts(s, w, r) })
		r.Post("/settings/hosts/move", func(w http.ResponseWriter, r *http.Request) { moveBox(s, w, r) })
		r.Post("/settings/hosts/{host}/gone", func(w http.ResponseWriter, r *http.Request) { goneHost(s, w, r) })
		r.Post("/settings/hosts/{host}/takeover", func(w http.ResponseWriter, r *http.Request) { takeoverHost(s, w, r) })
		r.Handle("/jobs", http.RedirectHandler("/jobs/", http.StatusMovedPermanently))
		r.Mount("/jobs/", s.jobsUI())
	})

	if s.opts.API != nil {
		r.Mount("/api/v1", s.opts.API)
	}
	if s.opts.MCP != nil {
		r.Handle("/mcp", s.opts.MCP)
	}

	return r
}

// crossOrigin wraps everything: a state-changing request from another
// origin is refused before any handler runs.
func crossOrigin(h http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Refused: this request came from another site.", http.StatusForbidden)
	}))
	return cop.Handler(h)
}

func (s *Server) jobsUI() http.Handler {
	if s.opts.JobsUI == nil {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "The job dashboard is not running in this process.", http.StatusServiceUnavailable)
		})
	}
	return withBackLink(s.opts.JobsUI)
}
