package api

import (
	"net/http"
	"time"

	"github.com/boxsnap/boxsnap/app/api/toolparams"
)

// The MCP SDK here has no tasks (long-running calls a client polls), so a
// long operation is waited on and polled by its ID: box_operation, and GET
// /operations/{operation}, answer alike (getOperation).

// MaxPollWait bounds box_operation's wait, in seconds: a call holds at most
// this long, then answers the state, to be asked again.
const MaxPollWait = 60

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
	var p toolparams.OperationParams
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
