package web

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/boxview"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
	"github.com/boxsnap/boxsnap/views"
)

type boxPage struct {
	Page views.Page
	Box  *snapshots.Box
	Head pagemodel.BoxHead
	Live pagemodel.BoxLive
	// Facts are the page's facts: kind, where, and where a fork came from.
	Facts []pagemodel.Fact
	// Forking is set while the box is being forked into, before its own
	// page can say more.
	Forking *pagemodel.Forking
	// History is the box log, newest first, paged.
	History pagemodel.History
	// Undo is the box's newest undo, of a reset or a restore, or nil.
	Undo *snapshots.Snapshot
	// Trashed says when a box in the trash goes, or "".
	Trashed string
	// Stopped is set when the box's guest exists and is stopped, by the
	// page's one read: the header offers Start.
	Stopped bool
	// done is what a settled region says when it is fetched again.
	done string
}

// boxLive is the live part of the page, from the page's one read.
func (s *Server) boxLive(r *http.Request, v *boxview.BoxView, rc pagemodel.RowContext, back string) (pagemodel.BoxLive, error) {
	b := v.Box
	rs := s.rows.RestoresOf(rc, b)
	c, err := s.rows.Card(asked{r}, v, rc, rs, back)
	if err != nil {
		return pagemodel.BoxLive{}, err
	}
	tl, _ := strconv.Atoi(r.URL.Query().Get("tl"))
	t := s.rows.TimelineOf(v, rc, tl)
	l := pagemodel.BoxLive{Notices: s.rows.Notices(asked{r}, v, rs), Card: c, Busy: c.Group.Busy, Announce: c.Group.Announce, Timeline: t,
		LiveURL: pagemodel.BoxLiveURL(b.Name, back, tl, r.URL.Query().Get("log"))}
	l.Requests = s.rows.ApprovalItems(asked{r}, b.ID, back)
	return l, nil
}

// showBoxPage answers a box's page, every part of it drawn from one read of
// the box (boxPageOf).
func (s *Server) showBoxPage(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "box")
	f := s.forkingOf(r, name)
	b, err := s.opts.Core.Box(r.Context(), snapshots.Owner(), name)
	if f != nil && (err != nil || f.Busy || f.Failed != "") {
		// The new box's page opens at once, starting: the fork's progress
		// until its operation ends.
		p := boxPage{Page: views.Page{Title: name, SignedIn: true, Nav: "boxes"}, Forking: f}
		s.render(w, r, http.StatusOK, "box", p)
		return
	}
	if err != nil {
		s.refused(w, r, err)
		return
	}
	p, err := s.boxPageOf(r, b.ID, "/boxes/"+b.Name)
	if err != nil {
		s.refused(w, r, err)
		return
	}
	p.Page = views.Page{Title: b.Name, SignedIn: true, Nav: "boxes", Flash: s.flash(w, r)}
	s.render(w, r, http.StatusOK, "box", p)
}

// boxPageOf reads a box once (the core's BoxView) and draws every part of
// its page from that read: the header and its Undo, the trash, the notices,
// the requests, the Snapshots card, the timeline, the facts and the
// history.
func (s *Server) boxPageOf(r *http.Request, boxID, back string) (boxPage, error) {
	shown := pagemodel.HistoryShown(atoi(r.URL.Query().Get("log")))
	v, err := s.opts.BoxViews.BoxView(r.Context(), snapshots.Owner(), boxID, shown+1)
	if err != nil {
		return boxPage{}, err
	}
	b := v.Box
	rc := s.rows.RowContext(r.Context(), back, r.URL.Query().Get("select") == "1")
	l, err := s.boxLive(r, v, rc, back)
	if err != nil {
		return boxPage{}, err
	}
	h := s.rows.Head(b, rc)
	p := boxPage{Box: b, Head: h, Live: l, Facts: s.rows.Facts(asked{r}, v, h), History: pagemodel.HistoryOf(rc, v, shown), Undo: v.Undo}
	p.Stopped = b.State == snapshots.BoxReady && b.ReleasedAt == nil && v.StatusErr == nil && v.Status.Exists && !v.Status.Running
	if v.Trash != nil {
		p.Trashed = InTrashUntilWords(v.Trash.Until.In(s.opts.Core.TimeZone(r.Context())).Format("Mon 2 Jan 15:04"))
	}
	if !l.Busy {
		p.done = pagemodel.DoneWords(v)
	}
	return p, nil
}

// atoi is a query's number, 0 when it is none.
func atoi(v string) int {
	n, _ := strconv.Atoi(v)
	return n
}
