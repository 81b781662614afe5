package web

import (
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/hosts"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
	"github.com/boxsnap/boxsnap/views"
)

// The Hosts page's handlers are functions of the server, not its methods,
// as setHead is: the server's methods are held to their count.

// hostsPage is Settings' Hosts: every host that ran boxsnap here, a
// move of a box to one of them, and a gone host's mark and takeover.
type hostsPage struct {
	Page  views.Page
	Hosts []hostRow
	This  string
}

// hostRow is a host with its last sighting in words.
type hostRow struct {
	hosts.Host
	Seen string
}

// showHosts is the Hosts page.
func showHosts(s *Server, w http.ResponseWriter, r *http.Request) {
	list, err := s.opts.Hosts.List(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p := hostsPage{Page: views.Page{Title: "Hosts", SignedIn: true, Nav: "hosts", Flash: s.flash(w, r)}, This: s.opts.Hosts.This()}
	tz, now := s.opts.Core.TimeZone(r.Context()), time.Now()
	for _, h := range list {
		p.Hosts = append(p.Hosts, hostRow{Host: h, Seen: pagemodel.WhenWords(h.LastSeen, now, tz)})
	}
	s.render(w, r, http.StatusOK, "hosts", p)
}

// moveBoxToHost moves the box named in the form to the host named in it.
func moveBoxToHost(s *Server, w http.ResponseWriter, r *http.Request) {
	box, host := r.PostFormValue("box"), r.PostFormValue("host")
	if _, err := s.opts.Hosts.Move(r.Context(), snapshots.Owner(), box, host); err != nil {
		s.refused(w, r, err)
		return
	}
	s.done(w, r, "/settings/hosts", hosts.MovingWords(box, host))
}

// markHostGone is the person's word that a host is gone for good.
func markHostGone(s *Server, w http.ResponseWriter, r *http.Request) {
	h, err := s.opts.Hosts.MarkGone(r.Context(), snapshots.Owner(), chi.URLParam(r, "host"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.done(w, r, "/settings/hosts", hosts.MarkedGoneWords(h.Name, h.Boxes))
}

// takeOverHost carries a gone host's boxes over to this host.
func takeOverHost(s *Server, w http.ResponseWriter, r *http.Request) {
	res, err := s.opts.Hosts.TakeOver(r.Context(), snapshots.Owner(), chi.URLParam(r, "host"), "")
	if err != nil {
		s.refused(w, r, err)
		return
	}
	s.done(w, r, "/settings/hosts", hosts.TakenOverWords(res))
}
