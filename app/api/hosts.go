package api

import (
	"net/http"

	"github.com/boxsnap/boxsnap/app/wire"
)

// showHosts lists every host that ran boxsnap on this database, and which
// one answers. The hosts' handlers are functions, as setHead is, not more
// of the server's methods.
func showHosts(s hostRoutes, w http.ResponseWriter, r *http.Request) {
	list, err := s.hosts.List(r.Context(), caller(r))
	s.answer(w, r, wire.HostsAnswer{Hosts: list, This: s.hosts.This()}, err)
}
