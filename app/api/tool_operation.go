package api

import (
	"net/http"
	"time"
)

// The MCP SDK here has no tasks (long-running calls a client polls), so a
// long operation is waited on and polled by its ID: box_operation, and GET
// /operations/{operation}, answer alike (getOperation).

// MaxPollWait bounds box_operation's wait, in seconds: a call holds at most
// this long, then answers the state, to be asked again.
const MaxPollWait = 60

// operationParams are box_operation's parameters: an operation's ID or a
// request's, and how many seconds to wait for it to end.
type operationParams struct {
	Operation string `json:"operation"`
	Wait      int    `json:"wait"`
}

// operationAsked reads what is polled and how long to wait: the route's
// path and ?wait=true (up to ToolWait), or box_operation's body.
func operationAsked(r *http.Request) (string, time.Duration, error) {
	if id := param(r, "operation"); id != "" {
		wait, err := waitParam(r)
		if wait {
			return id, ToolWait, err
		}
		return id, 0, err
	}
	var p operationParams
	if err := decode(r, &p, "operation and wait"); err != nil {
		return "", 0, err
	}
	if err := checkRef("operation", p.Operation); err != nil {
		return "", 0, err
	}
	if p.Wait < 0 || p.Wait > MaxPollWait {
		return "", 0, invalid("%s", pollWaitWords(MaxPollWait))
	}
	return p.Operation, time.Duration(p.Wait) * time.Second, nil
}
