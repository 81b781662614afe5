package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/tab"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
	"github.com/boxsnap/boxsnap/views"
)

// tabCounts counts the three tabs in the database; snaps is the count of
// snapshots when the caller has it, or -1.
func (s *Server) tabCounts(r *http.Request, current string, snaps int) pagemodel.TabCounts {
	tc := pagemodel.TabCounts{Current: current, Snapshots: snaps}
	if t, err := s.opts.Tab.Totals(r.Context(), snapshots.Owner(), snaps < 0); err == nil {
		tc.Machines, tc.Threads, tc.Trash = t.Machines, t.Threads, t.Trash
		if snaps < 0 {
			tc.Snapshots = t.Snapshots
		}
	} else {
		s.opts.Logger.Warn("count the boxes' tabs", "err", err)
	}
	return tc
}

// showSnapshotsTab answers the Snapshots tab: the whole page, the results
// alone for a search or filter (hx-target #snapshot-results), or the next
// boxes for "load more". The search, filters, counts, sort and page are the
// database's (package tab's Tab.Snapshots and Tab.Tally); only the page's
// boxes are read in full.
func (s *Server) showSnapshotsTab(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := pagemodel.ParseTabQuery(r.URL.Query())
	target := r.Header.Get("HX-Target")
	rc := s.rows.RowContext(r.Context(), q.URL(""), r.URL.Query().Get("select") == "1")
	rc.Selecting = q.Select
	p := pagemodel.SnapshotsTab{Query: q, Back: q.URL(""), RenewText: pagemodel.RenewWords(rc.KeepDays)}
	page, err := s.opts.Tab.Snapshots(ctx, snapshots.Owner(), q.Core(rc.Now))
	if err != nil && q.After != "" {
		// A place from an old address: from the start.
		q.After = ""
		page, err = s.opts.Tab.Snapshots(ctx, snapshots.Owner(), q.Core(rc.Now))
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p.Matching = page.SnapshotsMatching
	p.MatchingWords = snapshots.Plural(p.Matching, "snapshot matches", "snapshots match")
	shown := make([]snapshots.BoxSnapshots, len(page.Boxes))
	for i, tb := range page.Boxes {
		shown[i] = tb.BoxSnapshots
	}
	rc.Threads.KnowBoxes(shown)
	for _, tb := range page.Boxes {
		live := "/boxes/" + url.PathEscape(tb.Box.Name) + "/live?in=tab&back=" + url.QueryEscape(p.Back)
		if q.Select {
			live += "&select=1"
		}
		bg := s.rows.Group(tb.BoxSnapshots, tb.Matched, rc, live)
		bg.Dense = true
		p.Groups = append(p.Groups, bg)
	}
	if page.Next != "" && len(page.Boxes) > 0 {
		p.More = q.URL(page.Next)
		p.MoreID = "more-" + page.Boxes[len(page.Boxes)-1].Box.ID
	}
	if strings.HasPrefix(target, "div#more-") {
		s.renderBlock(w, http.StatusOK, "snapshots", "groups", p)
		return
	}
	full := target != "div#snapshot-results"
	var tally *tab.Tally
	if full {
		if tally, err = s.opts.Tab.Tally(ctx, snapshots.Owner(), rc.Now); err != nil {
			s.fail(w, r, err)
			return
		}
		total := 0
		for _, t := range tally.Rows {
			total += t.Snapshots
		}
		p.Tabs = s.tabCounts(r, "snapshots", total)
		p.Empty = total == 0
	} else if len(page.Boxes) == 0 {
		t, err := s.opts.Tab.Totals(ctx, snapshots.Owner(), true)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		p.Empty = t.Snapshots == 0
	}
	if p.Empty {
		p.NoneOn = s.noneOn(ctx)
	}
	if !full {
		// The address keeps the search, filters and sort, without the
		// form's empty fields.
		if r.Header.Get("HX-Source") == "form#search-form" {
			w.Header().Set("HX-Push-Url", q.URL(""))
		}
		s.renderBlock(w, http.StatusOK, "snapshots", "results", p)
		return
	}
	p.Line = s.rows.TabLineOf(tally, rc)
	p.Gone = s.goneBackends(r)
	p.Filters = s.rows.TabFilters(tally, q)
	for _, o := range []struct{ v, l string }{{"newest", "Newest"}, {"oldest", "Oldest"}, {"largest", "Largest"}, {"price", "Price"}, {"box", "Box name"}} {
		p.Sorts = append(p.Sorts, pagemodel.FilterOption{Value: o.v, Label: o.l, On: q.Sort == o.v})
	}
	p.Page = views.Page{Title: "Snapshots", SignedIn: true, Nav: "boxes", Flash: s.flash(w, r)}
	s.render(w, r, http.StatusOK, "snapshots", p)
}

// noneOn says which backends' boxes have no snapshots at all.
func (s *Server) noneOn(ctx context.Context) []string {
	kinds, err := s.opts.Tab.BoxKinds(ctx)
	if err != nil {
		s.opts.Logger.Warn("read the kinds of box", "err", err)
	}
	boxes := make([]*snapshots.Box, len(kinds))
	for i, k := range kinds {
		boxes[i] = &snapshots.Box{BackendID: k.BackendID, Kind: k.Kind}
	}
	var out []string
	for _, be := range s.opts.Core.Backends() {
		if pagemodel.SnapshottingOf(be, boxes) == nil {
			out = append(out, snapshots.NoSnapshotsWords(be.Label))
		}
	}
	return out
}

func (s *Server) renderBlock(w http.ResponseWriter, status int, page, block string, data any) {
	if err := s.opts.Views.RenderBlock(w, status, page, block, data); err != nil {
		s.opts.Logger.Error("render", "page", page, "block", block, "err", err)
		http.Error(w, renderFailed, http.StatusInternalServerError)
	}
}
