package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/wire"
)

// moveBox moves a box to another host, as a restore there from its newest
// snapshot.
func moveBox(s hostRoutes, w http.ResponseWriter, r *http.Request) {
	box := param(r, "box")
	var body wire.MoveBody
	err := checkRef("box", box)
	if err == nil {
		err = decode(r, &body, "host, the host the box goes to")
	}
	if err == nil {
		err = checkRef("host", body.Host)
	}
	op, wait := (*snapshots.Operation)(nil), false
	if err == nil {
		wait, err = waitParam(r)
	}
	if err == nil {
		op, err = s.hosts.Move(r.Context(), caller(r), box, body.Host)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.answerOperation(w, r, op, wait)
}
