package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/wire"
)

// takeoverHost carries a gone host's boxes over to the host asked.
func takeoverHost(s hostRoutes, w http.ResponseWriter, r *http.Request) {
	var body wire.TakeOverBody
	err := checkRef("host", param(r, "host"))
	if err == nil {
		err = decodeOptional(r, &body, "optionally to, the host the boxes go to")
	}
	var res *wire.TakeOverAnswer
	if err == nil {
		res, err = s.hosts.TakeOver(r.Context(), caller(r), param(r, "host"), body.To)
	}
	s.answer(w, r, res, err)
}
