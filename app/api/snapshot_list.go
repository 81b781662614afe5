package api

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/tab"
)

// listPage is how many boxes a page of the listing holds unless ?limit=
// says (1 to listMaxPage).
const (
	listPage    = 50
	listMaxPage = 500
)

// listSnapshots lists the snapshots the caller may see, by box, a page of
// boxes at a time (live boxes first, by name; ?limit= boxes, ?after= the
// place the page before gave in next), paged in the database so a listing
// never reads the whole install; ?box=<name or ID> for one box (no pages),
// ?kept=true for kept ones only, ?automatic=true for automatic ones only,
// false for saved ones only.
func (s snapshotReads) listSnapshots(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	if box := v.Get("box"); box != "" {
		s.list(w, r, snapshots.ListQuery{Box: box})
		return
	}
	kept, auto, err := listParams(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	limit := listPage
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > listMaxPage {
			s.fail(w, r, invalid("limit is a number of boxes from 1 to %d.", listMaxPage))
			return
		}
		limit = n
	}
	c := caller(r)
	ctx := r.Context()
	page, err := s.tab.Snapshots(ctx, c, tab.TabQuery{Kept: kept, Automatic: auto, Sort: tab.SortBoxes, After: v.Get("after"), Limit: limit})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	list := make([]snapshots.BoxSnapshots, len(page.Boxes))
	for i, tb := range page.Boxes {
		list[i] = tb.BoxSnapshots
		list[i].Snapshots = tb.Matched
	}
	ans, err := s.ListAnswer(ctx, c, list)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if page.Next != "" {
		next := url.Values{"after": {page.Next}}
		for _, k := range []string{"kept", "automatic"} {
			if x := v.Get(k); x != "" {
				next.Set(k, x)
			}
		}
		if v.Get("limit") != "" {
			next.Set("limit", strconv.Itoa(limit))
		}
		ans.Next = "/snapshots?" + next.Encode()
	}
	writeJSON(w, http.StatusOK, ans)
}

// listParams are a listing's ?kept= and ?automatic=.
func listParams(r *http.Request) (kept bool, auto *bool, err error) {
	if k := r.URL.Query().Get("kept"); k != "" {
		if kept, err = strconv.ParseBool(k); err != nil {
			return false, nil, invalid("kept is true or false.")
		}
	}
	if a := r.URL.Query().Get("automatic"); a != "" {
		v, err := strconv.ParseBool(a)
		if err != nil {
			return false, nil, invalid("automatic is true or false.")
		}
		auto = &v
	}
	return kept, auto, nil
}

// list answers one box's snapshots.
func (s snapshotReads) list(w http.ResponseWriter, r *http.Request, q snapshots.ListQuery) {
	if err := checkRef("box", q.Box); err != nil {
		s.fail(w, r, err)
		return
	}
	kept, auto, err := listParams(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	q.Kept, q.Automatic = kept, auto
	c := caller(r)
	ctx := r.Context()
	list, err := s.core.List(ctx, c, q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ans, err := s.ListAnswer(ctx, c, list)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ans)
}
