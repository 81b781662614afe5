package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/tab"
	"github.com/boxsnap/boxsnap/views"
)

// The Snapshots tab sends at most groupsPerPage boxes' cards at once, and
// only as many as hold rowsPerPage snapshots (the first box whole, however
// many it has), so a page stays small (about 4.5 KB a row); the rest
// arrive as the owner scrolls (htmx "load more" on reveal).
const (
	groupsPerPage = 10
	rowsPerPage   = 30
)

// tabQuery is the Snapshots tab's search, filters and sort, kept in the
// query string so a reload and the back button keep them, and After, the
// place a page starts (the core's cursor).
type tabQuery struct {
	Q, Where, Holds, By, Sort string
	Kept, Undos, Soon, Select bool
	After                     string
}

func parseTabQuery(v url.Values) tabQuery {
	q := tabQuery{Q: strings.TrimSpace(v.Get("q")), Where: v.Get("where"), Holds: v.Get("holds"), By: v.Get("by"), Sort: v.Get("sort"),
		Kept: v.Get("kept") == "1", Undos: v.Get("undos") == "1", Soon: v.Get("soon") == "1", Select: v.Get("select") == "1"}
	if a := v.Get("after"); len(a) < 1024 {
		q.After = a
	}
	if !slices.Contains(tab.TabSorts, q.Sort) {
		q.Sort = "newest"
	}
	return q
}

// URL is the tab's address with this query, from the given place.
func (q tabQuery) URL(after string) string {
	v := url.Values{}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("q", q.Q)
	set("where", q.Where)
	set("holds", q.Holds)
	set("by", q.By)
	if q.Sort != "newest" {
		set("sort", q.Sort)
	}
	for k, b := range map[string]bool{"kept": q.Kept, "undos": q.Undos, "soon": q.Soon, "select": q.Select} {
		if b {
			v.Set(k, "1")
		}
	}
	set("after", after)
	if len(v) == 0 {
		return "/boxes/snapshots"
	}
	return "/boxes/snapshots?" + v.Encode()
}

// Toggle is the address with Select switched.
func (q tabQuery) Toggle() string { q.Select = !q.Select; return q.URL("") }

// Filtered reports whether any filter or search narrows the list.
func (q tabQuery) Filtered() bool {
	return q.Q != "" || q.Where != "" || q.Holds != "" || q.By != "" || q.Kept || q.Undos || q.Soon
}

// core is the query as the core's tab takes it.
func (q tabQuery) core(now time.Time) tab.TabQuery {
	return tab.TabQuery{Search: q.Q, Where: q.Where, Holds: q.Holds, By: q.By, Kept: q.Kept, Undos: q.Undos, Soon: q.Soon,
		Now: now, Sort: q.Sort, After: q.After, Limit: groupsPerPage, Rows: rowsPerPage}
}

func whereKey(b *snapshots.Box) string { return b.BackendID + ":" + b.Host }

// filterOption is one choice of a filter group, with its count.
type filterOption struct {
	Name, Value, Label string
	Count              int
	On                 bool
}

// filterGroup is one of the tab's filter groups.
type filterGroup struct {
	Legend  string
	Name    string
	Radio   bool
	Options []filterOption
}

// tabLine is the line under the tabs.
type tabLine struct {
	Summary string
	// Requests says how many requests wait for the person's word.
	Requests string
	Needs    []string // amber: what needs the owner first
}

type snapshotsTab struct {
	Page    views.Page
	Tabs    tabCounts
	Line    tabLine
	Query   tabQuery
	Filters []filterGroup
	Sorts   []filterOption
	Groups  []boxGroup
	More    string // the next page's address, or ""
	MoreID  string
	Empty   bool
	NoneOn  []string // backends that have no snapshots
	Gone    []goneBackend
	// RenewText is the bulk bar's "Keep 30 more days".
	RenewText string
	Matching  int
	// MatchingWords says the count with its noun: "4 snapshots match".
	MatchingWords string
	Back          string
}

// tabCounts are the Boxes page's three tabs with their counts.
type tabCounts struct {
	Current                             string
	Machines, Threads, Snapshots, Trash int
}

// tabCounts counts the three tabs in the database; snaps is the count of
// snapshots when the caller has it, or -1.
func (s *Server) tabCounts(r *http.Request, current string, snaps int) tabCounts {
	tc := tabCounts{Current: current, Snapshots: snaps}
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
	q := parseTabQuery(r.URL.Query())
	target := r.Header.Get("HX-Target")
	rc := s.rows.rowContext(r, q.URL(""))
	rc.selecting = q.Select
	p := snapshotsTab{Query: q, Back: q.URL(""), RenewText: snapshots.RenewWords(rc.keepDays)}
	page, err := s.opts.Tab.Snapshots(ctx, snapshots.Owner(), q.core(rc.now))
	if err != nil && q.After != "" {
		// A place from an old address: from the start.
		q.After = ""
		page, err = s.opts.Tab.Snapshots(ctx, snapshots.Owner(), q.core(rc.now))
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
	rc.threads.knowBoxes(shown)
	for _, tb := range page.Boxes {
		live := "/boxes/" + url.PathEscape(tb.Box.Name) + "/live?in=tab&back=" + url.QueryEscape(p.Back)
		if q.Select {
			live += "&select=1"
		}
		bg := s.rows.group(tb.BoxSnapshots, tb.Matched, rc, live)
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
		if tally, err = s.opts.Tab.Tally(ctx, snapshots.Owner(), rc.now); err != nil {
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
	p.Line = s.tabLineOf(tally, rc)
	p.Gone = s.goneBackends(r)
	p.Filters = s.tabFilters(tally, q)
	for _, o := range []struct{ v, l string }{{"newest", "Newest"}, {"oldest", "Oldest"}, {"largest", "Largest"}, {"price", "Price"}, {"box", "Box name"}} {
		p.Sorts = append(p.Sorts, filterOption{Value: o.v, Label: o.l, On: q.Sort == o.v})
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
		if snapshottingOf(be, boxes) == nil {
			out = append(out, snapshots.NoSnapshotsWords(be.Label))
		}
	}
	return out
}

// tabFilters are the filter groups with their counts, from the tally of
// every snapshot.
func (s *Server) tabFilters(tally *tab.Tally, q tabQuery) []filterGroup {
	total, byYou, byAgents, kept, undos, soon := 0, 0, 0, 0, 0, tally.Soon
	where := map[string]*filterOption{}
	var whereOrder []string
	holds := map[string]int{}
	for _, t := range tally.Rows {
		total += t.Snapshots
		k := t.BackendID + ":" + t.Host
		if where[k] == nil {
			label := strings.TrimPrefix(s.rows.whereWords(&snapshots.Box{BackendID: t.BackendID, Host: t.Host}), "on ")
			where[k] = &filterOption{Name: "where", Value: k, Label: label}
			whereOrder = append(whereOrder, k)
		}
		where[k].Count += t.Snapshots
		holds[t.Holds] += t.Snapshots
		byYou += t.ByYou
		byAgents += t.ByAgents
		kept += t.Kept
		undos += t.Undos
	}
	sort.Strings(whereOrder)
	wg := filterGroup{Legend: "Where", Name: "where", Radio: true, Options: []filterOption{{Name: "where", Value: "", Label: "Anywhere", Count: total, On: q.Where == ""}}}
	for _, k := range whereOrder {
		o := *where[k]
		o.On = q.Where == k
		wg.Options = append(wg.Options, o)
	}
	hg := filterGroup{Legend: "Holds", Name: "holds", Radio: true, Options: []filterOption{{Name: "holds", Label: "Anything", Count: total, On: q.Holds == ""}}}
	for _, h := range []struct{ v, l string }{{"disk", "Disk"}, {"disk-and-memory", "Disk and memory"}, {"device", "Device"}} {
		if holds[h.v] > 0 || q.Holds == h.v {
			hg.Options = append(hg.Options, filterOption{Name: "holds", Value: h.v, Label: h.l, Count: holds[h.v], On: q.Holds == h.v})
		}
	}
	bg := filterGroup{Legend: "Taken by", Name: "by", Radio: true, Options: []filterOption{
		{Name: "by", Label: "Anyone", Count: total, On: q.By == ""},
		{Name: "by", Value: "you", Label: "You", Count: byYou, On: q.By == "you"},
		{Name: "by", Value: "agents", Label: "Agents", Count: byAgents, On: q.By == "agents"}}}
	og := filterGroup{Legend: "Show only", Options: []filterOption{
		{Name: "kept", Value: "1", Label: "Kept", Count: kept, On: q.Kept},
		{Name: "undos", Value: "1", Label: "Undos", Count: undos, On: q.Undos},
		{Name: "soon", Value: "1", Label: "Goes within 7 days", Count: soon, On: q.Soon}}}
	return []filterGroup{wg, hg, bg, og}
}

// tabLineOf is the line under the tabs: the count, undos apart, how many
// by agents, space by host, each paid provider's rate a month; and first,
// in amber, what needs the owner. It reads the tally of every snapshot.
func (s *Server) tabLineOf(tally *tab.Tally, rc rowContext) tabLine {
	var failed, unknown int
	soon := tally.Soon
	var counts snapshots.Counts
	space := map[string]int64{}
	hostLabel := map[string]string{}
	rate, currency := map[string]float64{}, map[string]string{}
	for _, t := range tally.Rows {
		counts = counts.Add(snapshots.Counts{All: t.Snapshots, Kept: t.Kept, Undos: t.Undos, Failed: t.Failed, ByAgents: t.ByAgents})
		b := &snapshots.Box{BackendID: t.BackendID, Host: t.Host}
		if t.Sized > 0 {
			k := whereKey(b)
			space[k] += t.SizeBytes
			hostLabel[k] = strings.TrimPrefix(s.rows.whereWords(b), "on ")
		}
		unknown += t.Snapshots - t.Sized
		if t.Monthly > 0 {
			be, _ := s.opts.Core.BackendOf(b)
			rate[be.Label] += t.Monthly
			currency[be.Label] = t.Currency
		}
		failed += t.Failed
	}
	var l tabLine
	parts := []string{counts.Words()}
	if counts.ByAgents > 0 {
		parts = append(parts, plural(counts.ByAgents, "by an agent", "by agents"))
	}
	var total int64
	for _, v := range space {
		total += v
	}
	switch len(space) {
	case 0:
	case 1:
		for k, v := range space {
			parts = append(parts, fmt.Sprintf("%s on %s", snapshots.GB(v), hostLabel[k]))
		}
	default:
		parts = append(parts, fmt.Sprintf("%s on %d hosts", snapshots.GB(total), len(space)))
	}
	if unknown > 0 {
		parts = append(parts, plural(unknown, "of size unknown", "of size unknown"))
	}
	var labels []string
	for k := range rate {
		labels = append(labels, k)
	}
	sort.Strings(labels)
	for _, k := range labels {
		parts = append(parts, fmt.Sprintf("%s %s a month held", k, snapshots.Money(rate[k], currency[k])))
	}
	l.Summary = strings.Join(parts, " · ")
	if rates, err := s.opts.Core.PaidRates(rc.ctx); err == nil {
		for _, pr := range rates {
			if pr.Past() {
				l.Needs = append(l.Needs, pr.PastWords())
			}
		}
	}
	if list, err := s.opts.Approvals.List(rc.ctx, snapshots.Owner(), ""); err == nil && len(list) > 0 {
		l.Requests = approvalsLine(len(list))
	}
	if soon > 0 {
		l.Needs = append(l.Needs, fmt.Sprintf("%d %s within %d days", soon, pick(soon, "goes", "go"), snapshots.EndingSoonDays))
	}
	if failed > 0 {
		l.Needs = append(l.Needs, plural(failed, "take failed", "takes failed"))
	}
	// Hosts come from real plans, one per host, cached a few seconds.
	room := snapshots.DefaultRoomPercent
	if st, err := s.opts.Core.Settings(rc.ctx); err == nil {
		room = st.RoomPercent
	}
	l.Needs = append(l.Needs, s.hostNeeds(rc.ctx, room)...)
	return l
}

func plural(n int, one, many string) string { return snapshots.Plural(n, one, many) }

func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func (s *Server) renderBlock(w http.ResponseWriter, status int, page, block string, data any) {
	if err := s.opts.Views.RenderBlock(w, status, page, block, data); err != nil {
		s.opts.Logger.Error("render", "page", page, "block", block, "err", err)
		http.Error(w, renderFailed, http.StatusInternalServerError)
	}
}
