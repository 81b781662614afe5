package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots/heads"
)

// headRoutes are what setHead holds, box_head's and PUT
// /boxes/{box}/head's one handler: the heads seam, nothing else of the
// server.
type headRoutes struct {
	failer
	heads *heads.Heads
}

// headTool is setHead as the tool table holds it, run on the server the
// call came to.
func headTool(s *server, w http.ResponseWriter, r *http.Request) { setHead(newHeadRoutes(s), w, r) }
