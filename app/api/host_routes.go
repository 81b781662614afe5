package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/hosts"
)

// hostRoutes are what the hosts' handlers hold (showHosts, goneHost,
// takeoverHost, and moveBox, a box's move to another host): the hosts
// seam, whose calls are the owner's alone, and the answer of a move's
// operation, nothing else of the server.
type hostRoutes struct {
	failer
	hostOperations
	hosts *hosts.Hosts
}

// hostOperations is what hostRoutes ask of the operations: a move's
// answer.
type hostOperations interface {
	answerOperation(w http.ResponseWriter, r *http.Request, op *snapshots.Operation, wait bool)
}
