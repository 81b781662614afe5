package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// routes is the API's one route table: every route with its method. Paths
// are relative to /api/v1, and each is in openapi.json (a test keeps the
// two the same).
func (s *server) routes() *chi.Mux {
	r := chi.NewRouter()
	r.Use(jsonOnly, cleanParams, longWaits)
	r.NotFound(notFound)
	r.MethodNotAllowed(methodNotAllowed)

	r.Get("/openapi.json", serveOpenAPI)
	// A share code's copy, to whoever holds the code (shared_copy.go).
	r.Post("/shared", newSnapshotMoves(s).sharedCopy)

	r.Group(func(r chi.Router) {
		r.Use(s.authenticate)

		// The agent's tools, from their one table
		// (tools.go), which MCP serves too.
		for _, t := range tools {
			r.Post("/tools/"+t.Name, func(w http.ResponseWriter, r *http.Request) { s.toolGate(t, w, r) })
		}
		r.Post("/tools/{tool}", unknownTool)
		r.Get("/skill", serveSkill)

		// Snapshots.
		r.Get("/snapshots", newSnapshotReads(s).listSnapshots)
		r.Get("/boxes/{box}/snapshots", newSnapshotReads(s).listBoxSnapshots)
		r.Post("/boxes/{box}/snapshots", newSnapshotChanges(s).takeSnapshot)
		r.Get("/boxes/{box}/snapshots/{snapshot}", newSnapshotReads(s).getSnapshot)
		r.Delete("/boxes/{box}/snapshots/{snapshot}", newSnapshotChanges(s).deleteSnapshot)
		r.Post("/boxes/{box}/snapshots/{snapshot}/restore", newSnapshotChanges(s).restoreSnapshot)
		r.Get("/boxes/{box}/snapshots/{snapshot}/fork", newSnapshotChanges(s).checkFork)
		r.Post("/boxes/{box}/snapshots/{snapshot}/fork", newSnapshotChanges(s).forkSnapshot)
		r.Put("/boxes/{box}/snapshots/{snapshot}/name", newSnapshotChanges(s).renameSnapshot)
		r.Put("/boxes/{box}/snapshots/{snapshot}/note", newSnapshotChanges(s).noteSnapshot)
		r.Post("/boxes/{box}/snapshots/{snapshot}/keep", newSnapshotChanges(s).keepSnapshot)
		r.Post("/boxes/{box}/snapshots/{snapshot}/unkeep", newSnapshotChanges(s).unkeepSnapshot)
		r.Post("/boxes/{box}/snapshots/{snapshot}/save", newSnapshotChanges(s).saveSnapshot)
		r.Post("/boxes/{box}/snapshots/{snapshot}/unsave", newSnapshotChanges(s).unsaveSnapshot)
		r.Get("/boxes/{box}/history", newBoxRoutes(s).boxHistory)
		r.Put("/boxes/{box}/history", newBoxRoutes(s).setBoxHistory)
		r.Delete("/boxes/{box}/history", newBoxRoutes(s).deleteHistory)
		r.Post("/boxes/{box}/snapshots/{snapshot}/renew", newSnapshotChanges(s).renewSnapshot)
		r.Get("/boxes/{box}/snapshots/{snapshot}/picture", newSnapshotReads(s).snapshotPicture)
		r.Get("/boxes/{box}/snapshots/{snapshot}/files", newSnapshotReads(s).snapshotFiles)
		r.Get("/boxes/{box}/snapshots/{snapshot}/file", newSnapshotReads(s).snapshotFile)
		r.Get("/boxes/{box}/snapshots/{snapshot}/download", newSnapshotReads(s).snapshotDownload)
		r.Get("/boxes/{box}/snapshots/{snapshot}/diff", newSnapshotReads(s).snapshotDiff)
		r.Get("/boxes/{box}/snapshots/{snapshot}/lineage", newSnapshotReads(s).snapshotLineage)

		// Moving snapshots: export, import, share codes.
		r.Get("/boxes/{box}/export", newSnapshotMoves(s).exportSnapshots)
		r.Post("/import", newSnapshotMoves(s).importSnapshots)
		r.Post("/boxes/{box}/snapshots/{snapshot}/shares", newSnapshotMoves(s).makeShare)
		r.Get("/shares", newSnapshotMoves(s).listShares)
		r.Delete("/shares/{share}", newSnapshotMoves(s).revokeShare)
		r.Post("/shares/redeem", newSnapshotMoves(s).redeemShare)

		// Operations.
		r.Get("/operations/{operation}", s.getOperation)
		r.Post("/operations/{operation}/check", s.checkOperation)

		// Boxes.
		r.Get("/boxes", newBoxRoutes(s).listBoxes)
		r.Post("/boxes", newBoxRoutes(s).acquireBox)
		r.Get("/boxes/{box}", newBoxRoutes(s).getBox)
		r.Post("/boxes/{box}/release", newBoxRoutes(s).releaseBox)
		r.Post("/boxes/{box}/reset", newBoxRoutes(s).resetBox)
		r.Post("/boxes/{box}/undo", newBoxRoutes(s).undoBox)
		r.Post("/boxes/{box}/move", func(w http.ResponseWriter, r *http.Request) { moveBox(newHostRoutes(s), w, r) })
		r.Get("/hosts", func(w http.ResponseWriter, r *http.Request) { showHosts(newHostRoutes(s), w, r) })
		r.Post("/hosts/{host}/gone", func(w http.ResponseWriter, r *http.Request) { goneHost(newHostRoutes(s), w, r) })
		r.Post("/hosts/{host}/takeover", func(w http.ResponseWriter, r *http.Request) { takeoverHost(newHostRoutes(s), w, r) })

		// The trash.
		r.Get("/trash", newBoxRoutes(s).listTrash)
		r.Post("/boxes/{box}/trash/restore", newBoxRoutes(s).restoreFromTrash)
		r.Post("/boxes/{box}/trash/empty", newBoxRoutes(s).emptyTrash)
		r.Put("/boxes/{box}/presence", newBoxRoutes(s).setPresence)
		r.Get("/boxes/{box}/log", newBoxRoutes(s).boxLog)
		r.Get("/boxes/{box}/lineage", newBoxRoutes(s).boxLineage)
		r.Put("/boxes/{box}/head", func(w http.ResponseWriter, r *http.Request) { setHead(newHeadRoutes(s), w, r) })

		// Threads.
		r.Get("/threads", s.listThreads)
		r.Post("/threads", s.createThread)

		// Settings.
		r.Get("/backends/{backend}/forget", newSettingsRoutes(s).checkForget)
		r.Post("/backends/{backend}/forget", newSettingsRoutes(s).forgetBackend)
		r.Get("/approvals", newApprovalRequests(s).listApprovals)
		r.Get("/approvals/{approval}", newApprovalRequests(s).getApproval)
		r.Post("/approvals/{approval}/approve", newApprovalRequests(s).approve)
		r.Post("/approvals/{approval}/decline", newApprovalRequests(s).decline)
		r.Get("/settings", newSettingsRoutes(s).getSettings)
		r.Put("/settings", newSettingsRoutes(s).saveSettings)
		r.Get("/templates", newSettingsRoutes(s).listTemplates)
		r.Put("/templates/{template}", newSettingsRoutes(s).saveTemplate)
		r.Delete("/templates/{template}", newSettingsRoutes(s).deleteTemplate)
	})
	return r
}

func notFound(w http.ResponseWriter, _ *http.Request) {
	writeError(w, codeNoRoute, "No such endpoint. GET /api/v1/openapi.json lists them.", false)
}

func methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	writeError(w, codeMethodNotAllowed,
		r.Method+" is not allowed here. GET /api/v1/openapi.json lists each endpoint's methods.", false)
}

func unknownTool(w http.ResponseWriter, r *http.Request) {
	writeError(w, codeNoRoute,
		"No tool named "+quote(param(r, "tool"))+". The tools are "+toolNames()+".", false)
}
