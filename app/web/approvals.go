package web

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/views"
)

// approvalItem is one request for the person's word, as the pages show it:
// who asks, for what, the plan it would run, and Approve and Decline.
type approvalItem struct {
	ID, Asks, Expires string
	Plan              []string
	Back              string
	// Changes and ChangesHref are the restore dialog's "14 files changed
	// since then" and its list, where the backend can tell.
	Changes, ChangesHref string
}

type approvalsPage struct {
	Page  views.Page
	Tabs  tabCounts
	Items []approvalItem
	None  string // what the page says when no request waits
}

func (s *Server) approvalItems(r *http.Request, box, back string) []approvalItem {
	list, err := s.opts.Core.Approvals().List(r.Context(), snapshots.Owner(), box)
	if err != nil {
		return nil
	}
	tz := s.opts.Core.TimeZone(r.Context())
	out := make([]approvalItem, 0, len(list))
	for _, a := range list {
		it := approvalItem{ID: a.ID, Back: back,
			Asks:    snapshots.AsksWords(a.ThreadTitle, a.BoxName, a.SnapshotName),
			Expires: fmt.Sprintf("Asked at %s; it expires at %s with nothing restored.", a.AskedAt.In(tz).Format("15:04"), a.ExpiresAt.In(tz).Format("15:04")),
			Plan:    a.Plan}
		if cmp, err := s.opts.Core.Contents().RestorePreview(r.Context(), snapshots.Owner(), a.Snapshot); err == nil && cmp != nil {
			it.Changes = cmp.Words
			it.ChangesHref = fmt.Sprintf("/boxes/%s/snapshots/%s/compare", url.PathEscape(a.BoxName), a.Snapshot)
		}
		out = append(out, it)
	}
	return out
}

// approvalsLine is the Snapshots tab's line for requests waiting, or "".
func approvalsLine(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%s for your word", snapshots.Plural(n, "request waits", "requests wait"))
}

// showApprovals is the page of requests waiting for the person's word.
func (s *Server) showApprovals(w http.ResponseWriter, r *http.Request) {
	p := approvalsPage{Page: views.Page{Title: "Requests", SignedIn: true, Nav: "requests", Flash: s.flash(w, r)},
		Tabs: s.tabCounts(r, "", -1), Items: s.approvalItems(r, "", "/approvals"), None: snapshots.NoRequestsWords}
	s.render(w, r, http.StatusOK, "approvals", p)
}
