// Package api serves the agent tools (POST /api/v1/tools/<tool>) and the
// REST API under /api/v1, for agents (a thread's bearer token, bxa_…) and
// the owner (a personal API token, bxt_…, as the boxsnap CLI sends). Every
// route is in routes.go; the OpenAPI 3 file that documents them, whose
// operation IDs are the handlers' names, is embedded and served at GET
// /api/v1/openapi.json. The agent tools come from one table (tools.go),
// which MCP (package app/api/mcptools, mounted at /mcp) serves too,
// through the same gate (mcp_seam.go), each tool with its MCP annotations;
// a changing tool's request is a retry key whose first answer is kept in
// PostgreSQL (retry.go); the agents' skill (skill.md) is served at /api/v1/skill and is the MCP
// server's instructions. Every destructive tool and its route take a dry
// run, the plan of app/snapshots/plans (dryrun.go); a long operation is
// polled by its ID (tool_operation.go); app/api/jsonin reads the bodies,
// a tool's into its parameter type of app/api/toolparams; app/api/answers
// holds the reads a route and a tool answer alike and the words of what
// an operation did.
//
// Each handler lives in the file named for it, as in app/web: its thing
// first and its verb last, a thing's words singular. So POST
// /boxes/{box}/reset is resetBox in box_reset.go, GET
// /boxes/{box}/snapshots/{snapshot} is getSnapshot in snapshot_get.go, and
// the GET that checks an action first (checkFork) lives beside the action's
// POST.
// A handler is a method of a small type, one a group (groups.go), which
// holds what its handlers use: the seams they call, and the shared reads
// and waits (operations, with answers.Lookups) through an interface it
// declares, never the server: agentTools (the tools' own, box_fork's
// toolFork in tool_fork.go), boxRoutes (boxes, the trash), snapshotReads,
// snapshotChanges (a take and a snapshot's changes), snapshotMoves
// (export, import, share codes), approvalRequests, settingsRoutes,
// hostRoutes (hosts, a box's move) and headRoutes (setHead). The
// operations', the threads' and the token check are the server's own.
//
// It calls the core (app/snapshots) and app/auth only. The caller's thread
// always comes from its token, never from a parameter; what a caller may do
// is the core's MayAct, whose refusals become HTTP answers here: codes.go is
// the one place where a refusal's code becomes a status.
//
// It must never import jobs, app/web, app/cli or a provider's subpackage.
package api
