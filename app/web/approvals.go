package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"

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
	list, err := s.opts.Approvals.List(r.Context(), snapshots.Owner(), box)
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

// approveRequest and declineRequest answer a request from the pages.
func (s *Server) approveRequest(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	back := safeNext(r.PostFormValue("back"))
	if r.PostFormValue("back") == "" {
		back = "/approvals"
	}
	if _, err := s.opts.Approvals.Approve(r.Context(), snapshots.Owner(), id); err != nil {
		s.refused(w, r, err)
		return
	}
	s.done(w, r, back, "Approved: the restore runs, with an undo.")
}

func (s *Server) declineRequest(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	back := safeNext(r.PostFormValue("back"))
	if r.PostFormValue("back") == "" {
		back = "/approvals"
	}
	if err := s.opts.Approvals.Decline(r.Context(), snapshots.Owner(), id); err != nil {
		s.refused(w, r, err)
		return
	}
	s.done(w, r, back, "Declined: nothing is restored.")
}

// restoresOff reports whether the person's restore of b is off: threads
// run on it and Settings keeps such restores off (section 5; unit 3).
func (s *Server) restoresOff(ctx context.Context, b *snapshots.Box) bool {
	if !snapshots.ThreadsRunOn(snapshots.Owner(), b) {
		return false
	}
	st, err := s.opts.Core.Settings(ctx)
	return err != nil || !st.ExecutionMachineRestores
}
