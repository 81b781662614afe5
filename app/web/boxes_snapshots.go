package web

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/views"
)

// groupsPerPage is how many boxes' cards the Snapshots tab sends at once;
// the rest arrive as the owner scrolls (htmx "load more" on reveal).
const groupsPerPage = 10

// tabQuery is the Snapshots tab's search, filters and sort, kept in the
// query string so a reload and the back button keep them.
type tabQuery struct {
	Q, Where, Holds, By, Sort string
	Kept, Undos, Soon, Select bool
	From                      int
}

func parseTabQuery(v url.Values) tabQuery {
	q := tabQuery{Q: strings.TrimSpace(v.Get("q")), Where: v.Get("where"), Holds: v.Get("holds"), By: v.Get("by"), Sort: v.Get("sort"),
		Kept: v.Get("kept") == "1", Undos: v.Get("undos") == "1", Soon: v.Get("soon") == "1", Select: v.Get("select") == "1"}
	if n, err := strconv.Atoi(v.Get("from")); err == nil && n > 0 && n < 1<<20 {
		q.From = n
	}
	switch q.Sort {
	case "oldest", "largest", "price", "box":
	default:
		q.Sort = "newest"
	}
	return q
}

// URL is the tab's address with this query, from the given group.
func (q tabQuery) URL(from int) string {
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
	if from > 0 {
		v.Set("from", strconv.Itoa(from))
	}
	if len(v) == 0 {
		return "/boxes/snapshots"
	}
	return "/boxes/snapshots?" + v.Encode()
}

// Toggle is the address with Select switched.
func (q tabQuery) Toggle() string { q.Select = !q.Select; return q.URL(0) }

// Filtered reports whether any filter or search narrows the list.
func (q tabQuery) Filtered() bool {
	return q.Q != "" || q.Where != "" || q.Holds != "" || q.By != "" || q.Kept || q.Undos || q.Soon
}

func whereKey(b *snapshots.Box) string { return b.BackendID + ":" + b.Host }

func (q tabQuery) match(b *snapshots.Box, sn *snapshots.Snapshot, threadTitle string, now time.Time) bool {
	if q.Where != "" && whereKey(b) != q.Where {
		return false
	}
	if q.Holds != "" && holdsKey(sn) != q.Holds {
		return false
	}
	switch q.By {
	case "you":
		if sn.ByKind != "owner" && sn.ByKind != "cli" {
			return false
		}
	case "agents":
		if sn.ByKind != "agent" {
			return false
		}
	}
	if q.Kept && !sn.Kept() {
		return false
	}
	if q.Undos && !sn.IsUndo() {
		return false
	}
	if q.Soon && !endingSoon(sn, now) {
		return false
	}
	if q.Q != "" {
		needle := strings.ToLower(q.Q)
		note := ""
		if sn.Note != nil {
			note = *sn.Note
		}
		hay := strings.ToLower(sn.Name + "\n" + note + "\n" + b.Name + "\n" + threadTitle)
		if !strings.Contains(hay, needle) {
			return false
		}
	}
	return true
}

func holdsKey(sn *snapshots.Snapshot) string {
	if sn.Scope == string(providers.ScopeDevice) {
		return "device"
	}
	return sn.Holds
}

func endingSoon(sn *snapshots.Snapshot, now time.Time) bool {
	return sn.Kept() && sn.KeptUntil.Sub(now) < snapshots.EndingSoonDays*24*time.Hour
}

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
	Needs   []string // amber: what needs the owner first
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
	Back      string
}

// tabCounts are the Boxes page's three tabs with their counts.
type tabCounts struct {
	Current                      string
	Machines, Threads, Snapshots int
}

func (s *Server) tabCounts(r *http.Request, current string, snapCount int) tabCounts {
	tc := tabCounts{Current: current, Snapshots: snapCount}
	if bs, err := s.opts.Core.Boxes(r.Context(), snapshots.Owner()); err == nil {
		for _, b := range bs {
			if b.ReleasedAt == nil {
				tc.Machines++
			}
		}
	}
	if ths, err := s.opts.Core.Threads(r.Context(), snapshots.Owner()); err == nil {
		tc.Threads = len(ths)
	}
	if snapCount < 0 {
		tc.Snapshots = 0
		if list, err := s.opts.Core.List(r.Context(), snapshots.Owner(), snapshots.ListQuery{}); err == nil {
			for _, bs := range list {
				tc.Snapshots += len(bs.Snapshots)
			}
		}
	}
	return tc
}

// showSnapshotsTab answers the Snapshots tab: the whole page, the results
// alone for a search or filter (hx-target #snapshot-results), or the next
// boxes for "load more".
func (s *Server) showSnapshotsTab(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := parseTabQuery(r.URL.Query())
	list, err := s.opts.Core.List(ctx, snapshots.Owner(), snapshots.ListQuery{})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rc := s.rowContext(r, q.URL(0))
	rc.selecting = q.Select
	p := snapshotsTab{Query: q, Back: q.URL(0)}
	p.Line = s.tabLineOf(list, rc)
	p.Gone = s.goneBackends(r)
	p.RenewText = snapshots.RenewWords(rc.keepDays)

	type matched struct {
		bs  snapshots.BoxSnapshots
		sns []*snapshots.Snapshot
	}
	var groups []matched
	total := 0
	where := map[string]*filterOption{}
	var whereOrder []string
	holds := map[string]int{}
	byYou, byAgents, kept, undos, soon := 0, 0, 0, 0, 0
	for _, bs := range list {
		title := ""
		if bs.Box.ThreadID != nil {
			title = rc.threads[*bs.Box.ThreadID]
		}
		var m []*snapshots.Snapshot
		for _, sn := range bs.Snapshots {
			total++
			k := whereKey(bs.Box)
			if where[k] == nil {
				where[k] = &filterOption{Name: "where", Value: k, Label: strings.TrimPrefix(s.whereWords(bs.Box), "on ")}
				whereOrder = append(whereOrder, k)
			}
			where[k].Count++
			holds[holdsKey(sn)]++
			switch sn.ByKind {
			case "owner", "cli":
				byYou++
			case "agent":
				byAgents++
			}
			if sn.Kept() {
				kept++
			}
			if sn.IsUndo() {
				undos++
			}
			if endingSoon(sn, rc.now) {
				soon++
			}
			if q.match(bs.Box, sn, title, rc.now) {
				m = append(m, sn)
			}
		}
		if len(m) > 0 {
			sortSnapshots(m, q.Sort)
			groups = append(groups, matched{bs, m})
			p.Matching += len(m)
		}
	}
	p.Empty = total == 0
	allBoxes := make([]*snapshots.Box, 0, len(list))
	for _, bs := range list {
		allBoxes = append(allBoxes, bs.Box)
	}
	for _, be := range s.opts.Core.Backends() {
		if snapshottingOf(be, allBoxes) == nil {
			p.NoneOn = append(p.NoneOn, fmt.Sprintf("Boxes on %s have no snapshots.", be.Label))
		}
	}
	sort.SliceStable(groups, func(i, j int) bool {
		a, b := groups[i], groups[j]
		switch q.Sort {
		case "box":
			return a.bs.Box.Name < b.bs.Box.Name
		default:
			return less(a.sns[0], b.sns[0], q.Sort)
		}
	})
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
	p.Filters = []filterGroup{wg, hg, bg, og}
	for _, o := range []struct{ v, l string }{{"newest", "Newest"}, {"oldest", "Oldest"}, {"largest", "Largest"}, {"price", "Price"}, {"box", "Box name"}} {
		p.Sorts = append(p.Sorts, filterOption{Value: o.v, Label: o.l, On: q.Sort == o.v})
	}
	end := q.From + groupsPerPage
	if end > len(groups) {
		end = len(groups)
	}
	from := q.From
	if from > len(groups) {
		from = len(groups)
	}
	for _, g := range groups[from:end] {
		live := "/boxes/" + url.PathEscape(g.bs.Box.Name) + "/live?in=tab&back=" + url.QueryEscape(p.Back)
		if q.Select {
			live += "&select=1"
		}
		bg := s.group(g.bs, g.sns, rc, live)
		bg.Dense = true
		p.Groups = append(p.Groups, bg)
	}
	if end < len(groups) {
		p.More = q.URL(end)
		p.MoreID = fmt.Sprintf("more-%d", end)
	}
	p.Tabs = s.tabCounts(r, "snapshots", total)
	p.Page = views.Page{Title: "Snapshots", SignedIn: true, Nav: "boxes", Flash: s.flash(w, r)}
	switch target := r.Header.Get("HX-Target"); {
	case strings.HasPrefix(target, "div#more-"):
		s.renderBlock(w, http.StatusOK, "snapshots", "groups", p)
	case target == "div#snapshot-results":
		// The address keeps the search, filters and sort, without the
		// form's empty fields.
		if r.Header.Get("HX-Source") == "form#search-form" {
			w.Header().Set("HX-Push-Url", q.URL(0))
		}
		s.renderBlock(w, http.StatusOK, "snapshots", "results", p)
	default:
		s.render(w, r, http.StatusOK, "snapshots", p)
	}
}

func less(a, b *snapshots.Snapshot, by string) bool {
	switch by {
	case "oldest":
		return a.TakenAt.Before(b.TakenAt)
	case "largest":
		return size(a) > size(b)
	case "price":
		return monthly(a.Price) > monthly(b.Price)
	}
	return a.TakenAt.After(b.TakenAt)
}

func size(sn *snapshots.Snapshot) int64 {
	if sn.SizeBytes == nil {
		return -1
	}
	return *sn.SizeBytes
}

func sortSnapshots(sns []*snapshots.Snapshot, by string) {
	if by == "box" {
		by = "newest"
	}
	sort.SliceStable(sns, func(i, j int) bool { return less(sns[i], sns[j], by) })
}

// tabLineOf is the line under the tabs: the count, undos apart, how many
// by agents, space by host, each paid provider's rate a month; and first,
// in amber, what needs the owner.
func (s *Server) tabLineOf(list []snapshots.BoxSnapshots, rc rowContext) tabLine {
	var soon, failed, unknown int
	var counts snapshots.Counts
	space := map[string]int64{}
	hostLabel := map[string]string{}
	rate, currency := map[string]float64{}, map[string]string{}
	for _, bs := range list {
		counts = counts.Add(snapshots.CountOf(bs.Snapshots))
		for _, sn := range bs.Snapshots {
			if sn.SizeBytes != nil {
				k := whereKey(bs.Box)
				space[k] += *sn.SizeBytes
				hostLabel[k] = strings.TrimPrefix(s.whereWords(bs.Box), "on ")
			} else {
				unknown++
			}
			if m := monthly(sn.Price); m > 0 {
				be, _ := s.opts.Core.BackendOf(bs.Box)
				rate[be.Label] += m
				currency[be.Label] = snapshots.PriceOf(sn.Price).Currency
			}
			if endingSoon(sn, rc.now) {
				soon++
			}
			if sn.State == snapshots.StateFailed {
				failed++
			}
		}
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
		http.Error(w, "Something went wrong showing this page.", http.StatusInternalServerError)
	}
}
