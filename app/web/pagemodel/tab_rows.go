package pagemodel

import (
	"fmt"
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

// TabQuery is the Snapshots tab's search, filters and sort, kept in the
// query string so a reload and the back button keep them, and After, the
// place a page starts (the core's cursor).
type TabQuery struct {
	Q, Where, Holds, By, Sort string
	Kept, Undos, Soon, Select bool
	After                     string
}

func ParseTabQuery(v url.Values) TabQuery {
	q := TabQuery{Q: strings.TrimSpace(v.Get("q")), Where: v.Get("where"), Holds: v.Get("holds"), By: v.Get("by"), Sort: v.Get("sort"),
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
func (q TabQuery) URL(after string) string {
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
func (q TabQuery) Toggle() string { q.Select = !q.Select; return q.URL("") }

// Filtered reports whether any filter or search narrows the list.
func (q TabQuery) Filtered() bool {
	return q.Q != "" || q.Where != "" || q.Holds != "" || q.By != "" || q.Kept || q.Undos || q.Soon
}

// Core is the query as the core's tab takes it.
func (q TabQuery) Core(now time.Time) tab.TabQuery {
	return tab.TabQuery{Search: q.Q, Where: q.Where, Holds: q.Holds, By: q.By, Kept: q.Kept, Undos: q.Undos, Soon: q.Soon,
		Now: now, Sort: q.Sort, After: q.After, Limit: groupsPerPage, Rows: rowsPerPage}
}

func whereKey(b *snapshots.Box) string { return b.BackendID + ":" + b.Host }

// FilterOption is one choice of a filter group, with its count.
type FilterOption struct {
	Name, Value, Label string
	Count              int
	On                 bool
}

// FilterGroup is one of the tab's filter groups.
type FilterGroup struct {
	Legend  string
	Name    string
	Radio   bool
	Options []FilterOption
}

// TabLine is the line under the tabs.
type TabLine struct {
	Summary string
	// Requests says how many requests wait for the person's word.
	Requests string
	Needs    []string // amber: what needs the owner first
}

type SnapshotsTab struct {
	Page    views.Page
	Tabs    TabCounts
	Line    TabLine
	Query   TabQuery
	Filters []FilterGroup
	Sorts   []FilterOption
	Groups  []BoxGroup
	More    string // the next page's address, or ""
	MoreID  string
	Empty   bool
	NoneOn  []string // backends that have no snapshots
	Gone    []GoneBackend
	// RenewText is the bulk bar's "Keep 30 more days".
	RenewText string
	Matching  int
	// MatchingWords says the count with its noun: "4 snapshots match".
	MatchingWords string
	Back          string
}

// TabCounts are the Boxes page's three tabs with their counts.
type TabCounts struct {
	Current                             string
	Machines, Threads, Snapshots, Trash int
}

// TabFilters are the filter groups with their counts, from the tally of
// every snapshot.
func (rb *RowBuilder) TabFilters(tally *tab.Tally, q TabQuery) []FilterGroup {
	total, byYou, byAgents, kept, undos, soon := 0, 0, 0, 0, 0, tally.Soon
	where := map[string]*FilterOption{}
	var whereOrder []string
	holds := map[string]int{}
	for _, t := range tally.Rows {
		total += t.Snapshots
		k := t.BackendID + ":" + t.Host
		if where[k] == nil {
			label := strings.TrimPrefix(rb.WhereWords(&snapshots.Box{BackendID: t.BackendID, Host: t.Host}), "on ")
			where[k] = &FilterOption{Name: "where", Value: k, Label: label}
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
	wg := FilterGroup{Legend: "Where", Name: "where", Radio: true, Options: []FilterOption{{Name: "where", Value: "", Label: "Anywhere", Count: total, On: q.Where == ""}}}
	for _, k := range whereOrder {
		o := *where[k]
		o.On = q.Where == k
		wg.Options = append(wg.Options, o)
	}
	hg := FilterGroup{Legend: "Holds", Name: "holds", Radio: true, Options: []FilterOption{{Name: "holds", Label: "Anything", Count: total, On: q.Holds == ""}}}
	for _, h := range []struct{ v, l string }{{"disk", "Disk"}, {"disk-and-memory", "Disk and memory"}, {"device", "Device"}} {
		if holds[h.v] > 0 || q.Holds == h.v {
			hg.Options = append(hg.Options, FilterOption{Name: "holds", Value: h.v, Label: h.l, Count: holds[h.v], On: q.Holds == h.v})
		}
	}
	bg := FilterGroup{Legend: "Taken by", Name: "by", Radio: true, Options: []FilterOption{
		{Name: "by", Label: "Anyone", Count: total, On: q.By == ""},
		{Name: "by", Value: "you", Label: "You", Count: byYou, On: q.By == "you"},
		{Name: "by", Value: "agents", Label: "Agents", Count: byAgents, On: q.By == "agents"}}}
	og := FilterGroup{Legend: "Show only", Options: []FilterOption{
		{Name: "kept", Value: "1", Label: "Kept", Count: kept, On: q.Kept},
		{Name: "undos", Value: "1", Label: "Undos", Count: undos, On: q.Undos},
		{Name: "soon", Value: "1", Label: "Goes within 7 days", Count: soon, On: q.Soon}}}
	return []FilterGroup{wg, hg, bg, og}
}

// TabLineOf is the line under the tabs: the count, undos apart, how many
// by agents, space by host, each paid provider's rate a month; and first,
// in amber, what needs the owner. It reads the tally of every snapshot.
func (rb *RowBuilder) TabLineOf(tally *tab.Tally, rc RowContext) TabLine {
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
			hostLabel[k] = strings.TrimPrefix(rb.WhereWords(b), "on ")
		}
		unknown += t.Snapshots - t.Sized
		if t.Monthly > 0 {
			be, _ := rb.core.BackendOf(b)
			rate[be.Label] += t.Monthly
			currency[be.Label] = t.Currency
		}
		failed += t.Failed
	}
	var l TabLine
	parts := []string{counts.Words()}
	if counts.ByAgents > 0 {
		parts = append(parts, Plural(counts.ByAgents, "by an agent", "by agents"))
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
		parts = append(parts, Plural(unknown, "of size unknown", "of size unknown"))
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
	if rates, err := rb.core.PaidRates(rc.ctx); err == nil {
		for _, pr := range rates {
			if pr.Past() {
				l.Needs = append(l.Needs, pr.PastWords())
			}
		}
	}
	if list, err := rb.approvals.List(rc.ctx, snapshots.Owner(), ""); err == nil && len(list) > 0 {
		l.Requests = approvalsLine(len(list))
	}
	if soon > 0 {
		l.Needs = append(l.Needs, fmt.Sprintf("%d %s within %d days", soon, Pick(soon, "goes", "go"), snapshots.EndingSoonDays))
	}
	if failed > 0 {
		l.Needs = append(l.Needs, Plural(failed, "take failed", "takes failed"))
	}
	// Hosts come from real plans, one per host, cached a few seconds.
	room := snapshots.DefaultRoomPercent
	if st, err := rb.core.Settings(rc.ctx); err == nil {
		room = st.RoomPercent
	}
	l.Needs = append(l.Needs, rb.hostNeeds(rc.ctx, room)...)
	return l
}

func Plural(n int, one, many string) string { return snapshots.Plural(n, one, many) }

func Pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// approvalsLine is the Snapshots tab's line for requests waiting, or "".
func approvalsLine(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%s for your word", snapshots.Plural(n, "request waits", "requests wait"))
}
