package coretest

import "github.com/boxsnap/boxsnap/app/api"

// APIOptions answers the API's options with every seam of the env, so
// that a test serving the API (or the MCP tools) gets each seam a new one
// adds without spelling them out. A test that leaves a seam out on
// purpose, or passes another logger, sets that field on the answer.
func (e *Env) APIOptions() api.Options {
	return api.Options{Core: e.Core, Restores: e.Restores, Take: e.Take, Keeps: e.Keeps, Tab: e.Tab, Boxes: e.Boxes, Forks: e.Forks, Contents: e.Contents, Approvals: e.Approvals, Pictures: e.Pictures, Heads: e.Heads, Hosts: e.Hosts, Auth: e.Auth, Logger: e.Logger}
}
