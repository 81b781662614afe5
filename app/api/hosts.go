package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/wire"
)

// listHosts answers every host that ran boxsnap on this database.
func (s *server) listHosts(w http.ResponseWriter, r *http.Request) {
	list, err := s.hosts.List(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.HostsAnswer{Hosts: list, This: s.hosts.This()})
}

// markHostGone is the person's word that a host is gone for good.
func (s *server) markHostGone(w http.ResponseWriter, r *http.Request) {
	name := param(r, "host")
	if err := checkRef("host", name); err != nil {
		s.fail(w, r, err)
		return
	}
	h, err := s.hosts.MarkGone(r.Context(), caller(r), name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, h)
}

// takeOverHost carries a gone host's boxes over to another host.
func (s *server) takeOverHost(w http.ResponseWriter, r *http.Request) {
	name := param(r, "host")
	var body wire.TakeOverBody
	err := checkRef("host", name)
	if err == nil {
		err = decodeOptional(r, &body, "optionally to, the host the boxes go to")
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	res, err := s.hosts.TakeOver(r.Context(), caller(r), name, body.To)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// moveBox moves a box to another host, as a restore there from its newest
// snapshot.
func (s *server) moveBox(w http.ResponseWriter, r *http.Request) {
	box := param(r, "box")
	var body wire.MoveBody
	err := checkRef("box", box)
	if err == nil {
		err = decode(r, &body, "host, the host the box goes to")
	}
	if err == nil {
		err = checkRef("host", body.Host)
	}
	wait := false
	if err == nil {
		wait, err = waitParam(r)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	op, err := s.hosts.Move(r.Context(), caller(r), box, body.Host)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.answerOperation(w, r, op, wait)
}
