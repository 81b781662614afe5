package web

import (
	"net/http"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/hosts"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
	"github.com/boxsnap/boxsnap/views"
)

// The Hosts page's handlers are functions of the server, not its methods,
// as setHead is: the server's methods are held to their count. Each is in
// the file named for it, as the API's of the same name are.

// hostsPage is Settings' Hosts: every host that ran boxsnap here, a
// move of a box to one of them, and a gone host's mark and takeover.
type hostsPage struct {
	Page  views.Page
	Hosts []hostRow
	This  string
	// Owned says which boxes belong to a host, from the backends' own
	// answers.
	Owned string
	// Backlog says how many of this host's snapshots are not in the
	// content store yet; empty with no content store.
	Backlog string
	// Cache says this host's content cache's bound and how full it is;
	// empty with no content store.
	Cache string
}

// hostRow is a host with its last sighting in words.
type hostRow struct {
	hosts.Host
	Seen string
}

// showHosts is the Hosts page.
func showHosts(s *Server, w http.ResponseWriter, r *http.Request) {
	list, err := s.opts.Hosts.List(r.Context(), snapshots.Owner())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p := hostsPage{Page: views.Page{Title: "Hosts", SignedIn: true, Nav: "hosts", Flash: s.flash(w, r)}, This: s.opts.Hosts.This(), Owned: s.opts.Hosts.Owned()}
	if p.Backlog, err = s.opts.Hosts.Backlog(r.Context()); err != nil {
		s.fail(w, r, err)
		return
	}
	if p.Cache, err = s.opts.Hosts.Cache(r.Context()); err != nil {
		s.fail(w, r, err)
		return
	}
	tz, now := s.opts.Core.TimeZone(r.Context()), time.Now()
	for _, h := range list {
		p.Hosts = append(p.Hosts, hostRow{Host: h, Seen: pagemodel.WhenWords(h.LastSeen, now, tz)})
	}
	s.render(w, r, http.StatusOK, "hosts", p)
}
