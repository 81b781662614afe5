package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/wire"
)

// hostRoutes are the hosts' routes: the hosts, a host marked gone and
// taken over, and a box's move. Their handlers are functions, as setHead
// is, not more of the server's methods.
func hostRoutes(s *server, r chi.Router) {
	r.Post("/boxes/{box}/move", func(w http.ResponseWriter, r *http.Request) { moveBox(s, w, r) })
	r.Get("/hosts", func(w http.ResponseWriter, r *http.Request) {
		list, err := s.hosts.List(r.Context())
		answerHost(s, w, r, wire.HostsAnswer{Hosts: list, This: s.hosts.This()}, err)
	})
	r.Post("/hosts/{host}/gone", func(w http.ResponseWriter, r *http.Request) {
		err := checkRef("host", param(r, "host"))
		var h wire.HostAnswer
		if err == nil {
			h, err = s.hosts.MarkGone(r.Context(), caller(r), param(r, "host"))
		}
		answerHost(s, w, r, h, err)
	})
	r.Post("/hosts/{host}/takeover", func(w http.ResponseWriter, r *http.Request) {
		var body wire.TakeOverBody
		err := checkRef("host", param(r, "host"))
		if err == nil {
			err = decodeOptional(r, &body, "optionally to, the host the boxes go to")
		}
		var res *wire.TakeOverAnswer
		if err == nil {
			res, err = s.hosts.TakeOver(r.Context(), caller(r), param(r, "host"), body.To)
		}
		answerHost(s, w, r, res, err)
	})
}

// answerHost answers v, or the refusal err says.
func answerHost(s *server, w http.ResponseWriter, r *http.Request, v any, err error) {
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// moveBox moves a box to another host, as a restore there from its newest
// snapshot.
func moveBox(s *server, w http.ResponseWriter, r *http.Request) {
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
