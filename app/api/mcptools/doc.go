// Package mcptools serves the agent tools over the Model Context Protocol,
// at /mcp (mcp.go): the MCP server made once from app/api's one tool table
// (api.ToolTable), each tool with its summary from openapi.json (and, for
// a tool that may answer before its operation ends, its 202 answer's
// words there: how to poll it), its schema (schema.go) and its annotations, and the commonest request, one
// tools/call, answered without the SDK's session (mcp_direct.go). Every
// call runs through the JSON API's own gate and token check (api.Gate,
// which it reaches through its gate interface, server.go), so a tool
// answers over MCP exactly as its JSON call does. app/boot gives the web
// the handler MCP returns.
//
// It imports app/api, which never imports it. It must never import jobs,
// app/web, app/cli, app/store or a provider's subpackage.
package mcptools
