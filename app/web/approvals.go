package web

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
	"github.com/boxsnap/boxsnap/views"
)

type approvalsPage struct {
	Page  views.Page
	Tabs  pagemodel.TabCounts
	Items []pagemodel.ApprovalItem
	None  string // what the page says when no request waits
}

func (s *Server) approvalItems(r *http.Request, box, back string) []pagemodel.ApprovalItem {
	list, err := s.opts.Approvals.List(r.Context(), snapshots.Owner(), box)
	if err != nil {
		return nil
	}
	tz := s.opts.Core.TimeZone(r.Context())
	out := make([]pagemodel.ApprovalItem, 0, len(list))
	for _, a := range list {
		it := pagemodel.ApprovalItem{ID: a.ID, Back: back,
			Asks:    snapshots.AsksWords(a.ThreadTitle, a.BoxName, a.SnapshotName),
			Expires: fmt.Sprintf("Asked at %s; it expires at %s with nothing restored.", a.AskedAt.In(tz).Format("15:04"), a.ExpiresAt.In(tz).Format("15:04")),
			Plan:    a.Plan}
		if cmp, err := s.opts.Contents.RestorePreview(r.Context(), snapshots.Owner(), a.Snapshot); err == nil && cmp != nil {
			it.Changes = cmp.Words
			it.ChangesHref = fmt.Sprintf("/boxes/%s/snapshots/%s/compare", url.PathEscape(a.BoxName), a.Snapshot)
		}
		out = append(out, it)
	}
	return out
}

// showApprovals is the page of requests waiting for the person's word.
func (s *Server) showApprovals(w http.ResponseWriter, r *http.Request) {
	p := approvalsPage{Page: views.Page{Title: "Requests", SignedIn: true, Nav: "requests", Flash: s.flash(w, r)},
		Tabs: s.tabCounts(r, "", -1), Items: s.approvalItems(r, "", "/approvals"), None: snapshots.NoRequestsWords}
	s.render(w, r, http.StatusOK, "approvals", p)
}
