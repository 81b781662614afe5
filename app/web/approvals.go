package web

import (
	"net/http"

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

// showApprovals is the page of requests waiting for the person's word.
func (s *Server) showApprovals(w http.ResponseWriter, r *http.Request) {
	p := approvalsPage{Page: views.Page{Title: "Requests", SignedIn: true, Nav: "requests", Flash: s.flash(w, r)},
		Tabs: s.tabCounts(r, "", -1), Items: s.rows.ApprovalItems(asked{r}, "", "/approvals"), None: snapshots.NoRequestsWords}
	s.render(w, r, http.StatusOK, "approvals", p)
}
