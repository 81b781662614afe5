// Package api serves the agent tools (POST /api/v1/tools/<tool>) and the
// REST API under /api/v1, for agents (a thread's bearer token, bxa_…) and
// the owner (a personal API token, bxt_…, as the boxsnap CLI sends). Every
// route is in routes.go; each handler lives in a file named for what it
// does; the OpenAPI 3 file that documents them is embedded and served at
// GET /api/v1/openapi.json. The agent tools come from one table (tools.go),
// which MCP (mcp.go, mounted at /mcp) serves too, through the same routes;
// the agents' skill (skill.md) is served at /api/v1/skill and is the MCP
// server's instructions.
//
// It calls the core (app/snapshots) and app/auth only. The caller's thread
// always comes from its token, never from a parameter; what a caller may do
// is the core's MayAct, whose refusals become HTTP answers here: codes.go is
// the one place where a refusal's code becomes a status.
//
// It must never import jobs, app/web, app/cli or a provider's subpackage.
package api
