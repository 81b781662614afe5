package api

import "net/http"

// agentTools are the agent tools' own handlers, the table's (tools.go):
// the server's core, seams and answers, in a type of their own so the
// server's type holds the routes' handlers alone.
type agentTools struct{ *server }

// tool is a handler of agentTools as the table holds it, run on the server
// the call came to.
func tool(h func(agentTools, http.ResponseWriter, *http.Request)) func(*server, http.ResponseWriter, *http.Request) {
	return func(s *server, w http.ResponseWriter, r *http.Request) { h(agentTools{s}, w, r) }
}
