package web

import (
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
)

// showBoxLive answers a box's live region, drawn again from one read: the
// whole of the box page below its navigation (in=page), or the box's card
// on the Snapshots tab (in=tab). A busy region polls about once a second;
// the page's events ask for it when anything else changes the box.
func (s *Server) showBoxLive(w http.ResponseWriter, r *http.Request) {
	if f := s.forkingOf(r, chi.URLParam(r, "box")); f != nil {
		w.Header().Set("Cache-Control", "no-store")
		s.renderBlock(w, http.StatusOK, "box", "forking", f)
		return
	}
	b, err := s.opts.Core.Box(r.Context(), snapshots.Owner(), chi.URLParam(r, "box"))
	if err != nil {
		s.refused(w, r, err)
		return
	}
	back := pagemodel.SafeNext(r.URL.Query().Get("back"))
	p, err := s.boxPageOf(r, b.ID, back)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	if r.URL.Query().Get("in") == "tab" {
		g := p.Live.Card.Group
		g.Dense = true
		g.LiveURL = "/boxes/" + url.PathEscape(b.Name) + "/live?in=tab&back=" + url.QueryEscape(back)
		if r.URL.Query().Get("select") == "1" {
			g.LiveURL += "&select=1"
		}
		if !g.Busy {
			g.Done = p.done
		}
		s.renderBlock(w, http.StatusOK, "box", "group", g)
		return
	}
	if !p.Live.Busy {
		p.Live.Done = p.done
	}
	s.renderBlock(w, http.StatusOK, "box", "boxpage", p)
}
